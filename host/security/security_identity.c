/* Actors, scopes and identities made at run time (security_identity.h). A scope copies the
 * compiled policies it names out of one policy set, as a service's context does, so a check
 * with it costs what a service's check costs; it keeps that set alive. */
#include "security_identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security_set.h"

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) abort(); /* a few hundred bytes: as the arena does, no useful recovery */
    return p;
}

/* ---- actors ---- */

sw_sec_actor *sw_sec_actor_new(const char *id, size_t len)
{
    sw_sec_actor *a = xcalloc(1, sizeof *a);
    atomic_init(&a->refs, 1);
    sw_arena_init(&a->arena);
    a->id = sw_arena_strndup(&a->arena, id, len);
    a->id_len = len;
    return a;
}

sw_sec_actor *sw_sec_actor_retain(sw_sec_actor *a)
{
    if (a) atomic_fetch_add(&a->refs, 1);
    return a;
}

void sw_sec_actor_release(sw_sec_actor *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1) return;
    sw_arena_free(&a->arena);
    free(a);
}

/* ---- scopes ---- */

static const sw_sec_policy *find_policy(const sw_security_set *set, const char *id)
{
    for (size_t i = 0; i < set->n_policies; i++)
        if (strcmp(set->policies[i].entry->id, id) == 0) return &set->policies[i];
    return NULL;
}

static bool seen(const char *const *ids, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ids[i], id) == 0) return true;
    return false;
}

static sw_sec_scope *scope_alloc(sw_security_set *set, size_t n)
{
    sw_sec_scope *s = xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->set = sw_security_retain(set);
    s->ids = xcalloc(n, sizeof *s->ids);
    s->pols = xcalloc(n, sizeof *s->pols);
    return s;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) abort();
    return d;
}

/* Adds id (once) with its policy from s->set; false when the set has no such policy. */
static bool scope_add(sw_sec_scope *s, const char *id)
{
    if (seen(s->ids, s->n, id)) return true;
    const sw_sec_policy *p = find_policy(s->set, id);
    s->ids[s->n] = xstrdup(id);
    if (p) s->pols[s->n] = *p;
    s->n++;
    return p != NULL;
}

sw_sec_scope *sw_sec_scope_new(sw_security_set *set, const char *const *ids, size_t n, char *err,
                               size_t errlen)
{
    sw_sec_scope *s = scope_alloc(set, n);
    for (size_t i = 0; i < n; i++) {
        if (scope_add(s, ids[i])) continue;
        snprintf(err, errlen, "unknown policy %s", ids[i]);
        sw_sec_scope_release(s);
        return NULL;
    }
    return s;
}

sw_sec_scope *sw_sec_scope_group(sw_security_set *set, const char *group, char *err, size_t errlen)
{
    sw_sec_scope *s = scope_alloc(set, set->n_policies);
    for (size_t i = 0; i < set->n_policies; i++)
        if (sec_in_group(set->policies[i].entry, group)) scope_add(s, set->policies[i].entry->id);
    if (s->n == 0) {
        snprintf(err, errlen, "no policy joins group %s", group);
        sw_sec_scope_release(s);
        return NULL;
    }
    s->group = xstrdup(group);
    return s;
}

sw_sec_scope *sw_sec_scope_rebuild(sw_security_set *set, const char *const *ids, size_t n,
                                   const char *group)
{
    sw_sec_scope *b = scope_alloc(set, n);
    for (size_t i = 0; i < n; i++)
        if (!scope_add(b, ids[i])) b->broken = true;
    if (group) b->group = xstrdup(group);
    return b;
}

sw_sec_scope *sw_sec_scope_bind(sw_sec_scope *s, sw_security_set *set)
{
    if (s->set == set) return sw_sec_scope_retain(s);
    sw_sec_scope *b = sw_sec_scope_rebuild(set, s->ids, s->n, s->group);
    b->broken |= s->broken;
    return b;
}

sw_sec_scope *sw_sec_scope_retain(sw_sec_scope *s)
{
    if (s) atomic_fetch_add(&s->refs, 1);
    return s;
}

void sw_sec_scope_release(sw_sec_scope *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    for (size_t i = 0; i < s->n; i++) free((char *)s->ids[i]);
    free(s->ids);
    free(s->pols);
    free((char *)s->group);
    sw_security_release(s->set);
    free(s);
}

/* ---- identities ---- */

sw_sec_identity *sw_sec_identity_new(sw_sec_actor *a, sw_sec_scope *s)
{
    sw_sec_identity *id = xcalloc(1, sizeof *id);
    atomic_init(&id->refs, 1);
    id->actor = sw_sec_actor_retain(a);
    id->scope = sw_sec_scope_retain(s);
    return id;
}

sw_sec_identity *sw_sec_identity_retain(sw_sec_identity *id)
{
    if (id) atomic_fetch_add(&id->refs, 1);
    return id;
}

void sw_sec_identity_release(sw_sec_identity *id)
{
    if (!id || atomic_fetch_sub(&id->refs, 1) != 1) return;
    sw_sec_actor_release(id->actor);
    sw_sec_scope_release(id->scope);
    free(id);
}

sw_sec_ctx sw_sec_ctx_of_identity(const sw_sec_actor *a, const sw_sec_scope *s)
{
    return (sw_sec_ctx){.service = NULL,
                        .actor_id = a->id,
                        .actor_meta = a->meta,
                        .n = s->broken ? 0 : s->n,
                        .policies = s->pols};
}

sw_sec_decision sw_sec_scope_decide(const sw_sec_scope *s, const sw_sec_actor *a,
                                    const char *action, size_t action_len, const char *resource,
                                    size_t resource_len, const sw_sec_value *meta,
                                    const sw_entry **decider)
{
    if (decider) *decider = NULL;
    if (s->broken) return SW_SEC_DENY;
    sw_sec_ctx ctx = sw_sec_ctx_of_identity(a, s);
    return sw_security_decide(&ctx, true, action, action_len, resource, resource_len, meta,
                              decider);
}
