/* Compiling a policy set from a registry snapshot: patterns, conditions and regular expressions
 * of every security.policy entry, then each service's context (actor and the de-duplicated
 * policies its `policies` and `groups` name). Evaluation is in security_eval.c. */
#include "security_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compile_patterns(sw_arena *a, const sw_strlist *in, sec_pattern **out, size_t *n)
{
    *n = in->n;
    *out = sw_arena_alloc(a, (in->n ? in->n : 1) * sizeof **out);
    for (size_t i = 0; i < in->n; i++) {
        const char *p = in->v[i];
        size_t len = strlen(p);
        bool prefix = len > 0 && p[len - 1] == '*';
        sec_pattern *pt = &(*out)[i];
        *pt = (sec_pattern){p, prefix ? len - 1 : len, prefix, 0, 0};
        pt->head = sec_head(p, pt->len, &pt->mask);
    }
}

static int compile_regex(sec_cond *c, const sw_node *v, const char *policy, char *err,
                         size_t errlen)
{
    int code;
    PCRE2_SIZE offset;
    c->re = pcre2_compile((PCRE2_SPTR)v->str, v->len, PCRE2_UTF, &code, &offset, NULL);
    if (c->re) return 0;
    snprintf(err, errlen, "%s: invalid regular expression \"%s\"", policy, v->str);
    return -1;
}

static int compile_condition(const sw_condition *in, sec_cond *c, const char *policy, char *err,
                             size_t errlen)
{
    c->field = &in->field;
    c->op = in->op;
    c->has_value = in->value != NULL;
    if (in->value) sw_sec_value_of_node(in->value, &c->value);
    if (in->has_value_from) c->value_from = &in->value_from;
    c->want_present = in->op == SW_OP_EXISTS;
    if ((in->op == SW_OP_EXISTS || in->op == SW_OP_NEXISTS) && in->value && in->value->num == 0)
        c->want_present = !c->want_present; /* `exists: false` means absent */
    if ((in->op == SW_OP_MATCHES || in->op == SW_OP_NMATCHES) && in->value)
        return compile_regex(c, in->value, policy, err, errlen);
    return 0;
}

static int compile_policy(sw_arena *a, const sw_entry *e, sw_sec_policy *p, char *err,
                          size_t errlen)
{
    const sw_policy *in = &e->as.policy;
    p->entry = e;
    p->deny = in->effect == SW_EFFECT_DENY;
    compile_patterns(a, &in->actions, &p->actions, &p->n_actions);
    compile_patterns(a, &in->resources, &p->resources, &p->n_resources);
    p->n_conds = in->n_conditions;
    p->conds = sw_arena_alloc(a, (in->n_conditions ? in->n_conditions : 1) * sizeof *p->conds);
    for (size_t i = 0; i < in->n_conditions; i++)
        if (compile_condition(&in->conditions[i], &p->conds[i], e->id, err, errlen) != 0) return -1;
    return 0;
}

/* Marks in `chosen` the policies the context names directly or through a group. */
static void choose_policies(const sw_security_set *s, const sw_security_ctx *sc, bool *chosen)
{
    for (size_t i = 0; i < s->n_policies; i++) {
        const sw_entry *e = s->policies[i].entry;
        for (size_t k = 0; k < sc->policies.n && !chosen[i]; k++)
            chosen[i] = sc->policies.v[k].target == e;
        for (size_t k = 0; k < sc->groups.n && !chosen[i]; k++)
            chosen[i] = sec_in_group(e, sc->groups.v[k].id);
    }
}

const sw_security_ctx *sw_security_declared(const sw_entry *svc, const sw_entry **from)
{
    for (const sw_entry *e = svc; e; e = e->parent) {
        const sw_security_ctx *sc = sw_entry_is_service(e) ? &e->as.service.lifecycle.security
                                                           : &e->as.group.lifecycle.security;
        if (!sc->present) continue;
        if (from) *from = e;
        return sc;
    }
    return NULL;
}

static void compile_ctx(sw_security_set *s, const sw_entry *svc, const sw_security_ctx *sc,
                        bool *chosen)
{
    sw_sec_ctx *ctx = sw_arena_alloc(&s->arena, sizeof *ctx);
    ctx->service = svc->id;
    ctx->actor_id = sc->actor_id;
    ctx->actor_meta = sc->actor_meta;
    memset(chosen, 0, s->n_policies * sizeof *chosen);
    choose_policies(s, sc, chosen);
    size_t n = 0;
    for (size_t i = 0; i < s->n_policies; i++) n += chosen[i];
    sw_sec_policy *policies = sw_arena_alloc(&s->arena, (n ? n : 1) * sizeof *policies);
    ctx->policies = policies;
    for (size_t i = 0; i < s->n_policies; i++)
        if (chosen[i]) policies[ctx->n++] = s->policies[i];
    sw_strmap_put(&s->services, svc->id, ctx);
}

static void free_regexes(sw_security_set *s)
{
    for (size_t i = 0; i < s->n_policies; i++)
        for (size_t k = 0; k < s->policies[i].n_conds; k++)
            pcre2_code_free(s->policies[i].conds[k].re);
}

static void set_free(sw_security_set *s)
{
    free_regexes(s);
    sw_strmap_free(&s->services);
    sw_arena_free(&s->arena);
    sw_registry_free(s->reg);
    free(s);
}

static int compile_policies(sw_security_set *s, char *err, size_t errlen)
{
    const sw_registry *r = s->reg;
    for (size_t i = 0; i < r->n_entries; i++)
        s->n_policies += r->entries[i]->kind == SW_KIND_POLICY;
    s->policies =
        sw_arena_alloc(&s->arena, (s->n_policies ? s->n_policies : 1) * sizeof *s->policies);
    size_t k = 0;
    for (size_t i = 0; i < r->n_entries; i++) {
        if (r->entries[i]->kind != SW_KIND_POLICY) continue;
        if (compile_policy(&s->arena, r->entries[i], &s->policies[k++], err, errlen) != 0)
            return -1;
    }
    return 0;
}

sw_security_set *sw_security_compile(const sw_registry *reg, char *err, size_t errlen)
{
    sw_security_set *s = calloc(1, sizeof *s);
    if (!s) abort();
    atomic_init(&s->refs, 1);
    s->reg = sw_registry_retain(reg);
    sw_arena_init(&s->arena);
    sw_strmap_init(&s->services);
    if (compile_policies(s, err, errlen) != 0) {
        set_free(s);
        return NULL;
    }
    bool *chosen = calloc(s->n_policies ? s->n_policies : 1, sizeof *chosen);
    if (!chosen) abort();
    for (size_t i = 0; i < reg->n_entries; i++) {
        const sw_entry *e = reg->entries[i];
        const sw_security_ctx *sc = sw_entry_is_service(e) ? sw_security_declared(e, NULL) : NULL;
        if (e->kind == SW_KIND_HTTP_ROUTER && e->as.http_router.lifecycle.security.present)
            sc = &e->as.http_router.lifecycle.security; /* its handlers' identity */
        if (e->kind == SW_KIND_TEST_LUA && e->as.test_lua.lifecycle.security.present)
            sc = &e->as.test_lua.lifecycle.security; /* keyed by the test's id (steward test) */
        if (sc) compile_ctx(s, e, sc, chosen);
    }
    free(chosen);
    return s;
}

sw_security_set *sw_security_retain(sw_security_set *s)
{
    if (s) atomic_fetch_add(&s->refs, 1);
    return s;
}

void sw_security_release(sw_security_set *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) set_free(s);
}

const sw_sec_ctx *sw_security_ctx_of(const sw_security_set *s, const char *service_id)
{
    return s && service_id ? sw_strmap_get(&s->services, service_id) : NULL;
}

const sw_registry *sw_security_registry(const sw_security_set *s) { return s->reg; }

const sw_entry *sw_sec_ctx_policy(const sw_sec_ctx *ctx, size_t i)
{
    return ctx->policies[i].entry;
}
