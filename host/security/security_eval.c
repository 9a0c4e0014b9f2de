/* Evaluating one check against a compiled context (docs/security.md): pattern matching, field
 * resolution, the operators with no coercion, missing-field and type-error rules, and
 * deny-overrides. Allocates nothing: values are read in place, and regular expressions run on
 * PCRE2's DFA matcher (linear in the subject, no backtracking) with a per-thread match block. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "security_set.h"

const char *const sw_sec_decision_names[] = {"undefined", "allow", "deny"};

typedef enum { C_FALSE, C_TRUE, C_ERROR } cres;

/* ---- YAML nodes as values ---- */

static void node_field(const sw_sec_value *c, const char *key, sw_sec_value *out);
static bool node_item(const sw_sec_value *c, size_t i, sw_sec_value *out);
static const sw_sec_source node_source = {node_field, node_item};

void sw_sec_value_of_node(const sw_node *n, sw_sec_value *out)
{
    memset(out, 0, sizeof *out);
    if (!n) return;
    if (n->type != SW_NODE_SCALAR) {
        *out = (sw_sec_value){.type = SW_SV_CONTAINER, .src = &node_source, .ref = n};
        return;
    }
    switch (n->scalar) {
    case SW_SCALAR_NULL: out->type = SW_SV_MISSING; break;
    case SW_SCALAR_BOOL: out->type = SW_SV_BOOL, out->b = n->num != 0; break;
    case SW_SCALAR_INT:
    case SW_SCALAR_FLOAT: out->type = SW_SV_NUMBER, out->num = n->num; break;
    default: out->type = SW_SV_STRING, out->s = n->str, out->len = n->len;
    }
}

static void node_field(const sw_sec_value *c, const char *key, sw_sec_value *out)
{
    const sw_node *m = c->ref;
    size_t len = strlen(key);
    sw_sec_value_of_node(NULL, out);
    if (m->type != SW_NODE_MAP) return;
    for (size_t i = 0; i < m->n; i++) {
        const sw_node *k = sw_node_key(m, i);
        if (k->type == SW_NODE_SCALAR && k->len == len && memcmp(k->str, key, len) == 0) {
            sw_sec_value_of_node(sw_node_val(m, i), out);
            return;
        }
    }
}

static bool node_item(const sw_sec_value *c, size_t i, sw_sec_value *out)
{
    const sw_node *l = c->ref;
    if (l->type != SW_NODE_SEQ || i >= l->n) return false;
    sw_sec_value_of_node(l->kids[i], out);
    return true;
}

/* ---- fields ---- */

typedef struct check_args {
    const sw_sec_ctx *ctx;
    const char *action, *resource;
    size_t action_len, resource_len;
    uint64_t action_head, resource_head;
    const sw_sec_value *meta;
} check_args;

/* Walks a meta path; anything but a container on the way makes the field missing. */
static void walk(sw_sec_value *v, const sw_field_path *f)
{
    for (size_t i = 0; i < f->n && v->type != SW_SV_MISSING; i++) {
        if (v->type != SW_SV_CONTAINER) {
            v->type = SW_SV_MISSING;
            return;
        }
        sw_sec_value next;
        v->src->field(v, f->segs[i], &next);
        *v = next;
    }
}

static void resolve(const sw_field_path *f, const check_args *a, sw_sec_value *out)
{
    memset(out, 0, sizeof *out);
    switch (f->root) {
    case SW_FIELD_ACTOR_ID:
        if (a->ctx->actor_id)
            *out = (sw_sec_value){
                .type = SW_SV_STRING, .s = a->ctx->actor_id, .len = strlen(a->ctx->actor_id)};
        return;
    case SW_FIELD_ACTION:
        *out = (sw_sec_value){.type = SW_SV_STRING, .s = a->action, .len = a->action_len};
        return;
    case SW_FIELD_RESOURCE:
        *out = (sw_sec_value){.type = SW_SV_STRING, .s = a->resource, .len = a->resource_len};
        return;
    case SW_FIELD_ACTOR_META: sw_sec_value_of_node(a->ctx->actor_meta, out); break;
    default:
        if (a->meta) *out = *a->meta;
        break;
    }
    walk(out, f);
}

/* ---- operators ---- */

static bool is_scalar(const sw_sec_value *v)
{
    return v->type == SW_SV_STRING || v->type == SW_SV_NUMBER || v->type == SW_SV_BOOL;
}

/* Ordering of two scalars of one type: -1, 0, 1; 2 when they cannot be compared (types differ,
 * or booleans asked for an order). */
static int compare(const sw_sec_value *a, const sw_sec_value *b, bool need_order)
{
    if (a->type != b->type || !is_scalar(a)) return 2;
    switch (a->type) {
    case SW_SV_STRING: {
        int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
        if (c == 0) c = a->len < b->len ? -1 : a->len > b->len;
        return c < 0 ? -1 : c > 0;
    }
    case SW_SV_NUMBER: return a->num < b->num ? -1 : a->num > b->num;
    default:
        if (need_order) return 2;
        return a->b == b->b ? 0 : 1;
    }
}

static cres order(int c, int op)
{
    if (c == 2) return C_ERROR;
    switch (op) {
    case SW_OP_EQ: return c == 0;
    case SW_OP_LT: return c < 0;
    case SW_OP_GT: return c > 0;
    case SW_OP_LTE: return c <= 0;
    default: return c >= 0; /* gte */
    }
}

/* Whether the list holds an item equal to x (same type); items of other types never match. */
static cres list_has(const sw_sec_value *list, const sw_sec_value *x)
{
    if (list->type != SW_SV_CONTAINER || !is_scalar(x)) return C_ERROR;
    sw_sec_value item;
    for (size_t i = 0; list->src->item(list, i, &item); i++)
        if (compare(&item, x, false) == 0) return C_TRUE;
    return C_FALSE;
}

static cres contains(const sw_sec_value *field, const sw_sec_value *v)
{
    if (field->type == SW_SV_STRING && v->type == SW_SV_STRING)
        return v->len == 0 || memmem(field->s, field->len, v->s, v->len) != NULL;
    return list_has(field, v);
}

/* The DFA matcher's per-thread match block: created on a thread's first match, freed when the
 * thread exits. */
static pthread_key_t md_key;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;

static void md_free(void *md) { pcre2_match_data_free(md); }
static void md_init(void) { pthread_key_create(&md_key, md_free); }

static pcre2_match_data *thread_match_data(void)
{
    pthread_once(&md_once, md_init);
    pcre2_match_data *md = pthread_getspecific(md_key);
    if (!md && (md = pcre2_match_data_create(1, NULL))) pthread_setspecific(md_key, md);
    return md;
}

#define DFA_WORKSPACE 1000

static cres regex(const sec_cond *c, const sw_sec_value *field)
{
    if (field->type != SW_SV_STRING || !c->re) return C_ERROR;
    pcre2_match_data *md = thread_match_data();
    if (!md) return C_ERROR;
    int ws[DFA_WORKSPACE];
    int rc =
        pcre2_dfa_match(c->re, (PCRE2_SPTR)field->s, field->len, 0, 0, md, NULL, ws, DFA_WORKSPACE);
    if (rc == PCRE2_ERROR_NOMATCH) return C_FALSE;
    return rc >= 0 ? C_TRUE : C_ERROR; /* invalid UTF-8, limits: an error, never a match */
}

static bool negated(int op)
{
    return op == SW_OP_NE || op == SW_OP_NIN || op == SW_OP_NCONTAINS || op == SW_OP_NMATCHES;
}

static cres positive(const sec_cond *c, const sw_sec_value *field, const sw_sec_value *v)
{
    switch (c->op) {
    case SW_OP_IN:
    case SW_OP_NIN: return list_has(v, field);
    case SW_OP_CONTAINS:
    case SW_OP_NCONTAINS: return contains(field, v);
    case SW_OP_MATCHES:
    case SW_OP_NMATCHES: return regex(c, field);
    case SW_OP_EQ:
    case SW_OP_NE: return order(compare(field, v, false), SW_OP_EQ);
    default: return order(compare(field, v, true), c->op);
    }
}

static cres eval_cond(const sec_cond *c, const check_args *a)
{
    sw_sec_value field, from;
    resolve(c->field, a, &field);
    if (c->op == SW_OP_EXISTS || c->op == SW_OP_NEXISTS)
        return (field.type != SW_SV_MISSING) == c->want_present;
    const sw_sec_value *v = &c->value;
    if (!c->has_value) {
        resolve(c->value_from, a, &from);
        v = &from;
    }
    /* A missing field (or value_from) makes the positive operator false, its negation true. */
    bool neg = negated(c->op);
    if (field.type == SW_SV_MISSING || v->type == SW_SV_MISSING) return neg ? C_TRUE : C_FALSE;
    cres r = positive(c, &field, v);
    if (r == C_ERROR || !neg) return r;
    return r == C_TRUE ? C_FALSE : C_TRUE;
}

/* ---- policies ---- */

static inline __attribute__((always_inline)) bool
pattern_match(const sec_pattern *p, size_t n, const char *s, size_t len, uint64_t head)
{
    for (size_t i = 0; i < n; i++) {
        if ((head & p[i].mask) != p[i].head) continue;
        if (p[i].prefix ? len < p[i].len : len != p[i].len) continue;
        if (p[i].len <= 8 || memcmp(s + 8, p[i].lit + 8, p[i].len - 8) == 0) return true;
    }
    return false;
}

/* All conditions hold; a type error counts as holding for a deny and not for an allow. */
static bool applies(const sw_sec_policy *p, const check_args *a)
{
    if (!pattern_match(p->actions, p->n_actions, a->action, a->action_len, a->action_head))
        return false;
    if (!pattern_match(p->resources, p->n_resources, a->resource, a->resource_len,
                       a->resource_head))
        return false;
    for (size_t i = 0; i < p->n_conds; i++) {
        cres r = eval_cond(&p->conds[i], a);
        if (r == C_FALSE || (r == C_ERROR && !p->deny)) return false;
    }
    return true;
}

sw_sec_decision sw_security_check(const sw_sec_ctx *ctx, bool strict, const char *action,
                                  const char *resource, const sw_sec_value *meta)
{
    return sw_security_check_len(ctx, strict, action, strlen(action), resource, strlen(resource),
                                 meta);
}

sw_sec_decision sw_security_check_len(const sw_sec_ctx *ctx, bool strict, const char *action,
                                      size_t action_len, const char *resource, size_t resource_len,
                                      const sw_sec_value *meta)
{
    return sw_security_decide(ctx, strict, action, action_len, resource, resource_len, meta, NULL);
}

sw_sec_decision sw_security_decide(const sw_sec_ctx *ctx, bool strict, const char *action,
                                   size_t action_len, const char *resource, size_t resource_len,
                                   const sw_sec_value *meta, const sw_entry **decider)
{
    if (decider) *decider = NULL;
    if (!ctx || !ctx->actor_id) return strict ? SW_SEC_DENY : SW_SEC_ALLOW;
    check_args a = {ctx,
                    action,
                    resource,
                    action_len,
                    resource_len,
                    sec_head(action, action_len, NULL),
                    sec_head(resource, resource_len, NULL),
                    meta};
    bool allowed = false;
    for (size_t i = 0; i < ctx->n; i++) {
        const sw_sec_policy *p = &ctx->policies[i];
        if (!p->deny && allowed) continue; /* only a deny can change the answer now */
        if (!applies(p, &a)) continue;
        if (decider) *decider = p->entry; /* the deny that decides, else the first allow */
        if (p->deny) return SW_SEC_DENY;
        allowed = true;
    }
    return allowed ? SW_SEC_ALLOW : SW_SEC_UNDEFINED;
}
