/* Identities made at run time (docs/security.md "Identities at run time"): an actor (an id and
 * its meta), a scope (a set of policies of a policy set) and the pair a process runs as. All
 * three are immutable once made and reference-counted, so any thread may read one while
 * another holds it (a token store hands the same identity to every worker). No Lua: the
 * bindings (host/lua_api/api_identity.c) decide who may make one. */
#ifndef STEWARD_SECURITY_IDENTITY_H
#define STEWARD_SECURITY_IDENTITY_H

#include <stdatomic.h>

#include "security.h"

typedef struct sw_sec_actor {
    atomic_uint refs;
    const char *id; /* in arena */
    size_t id_len;
    const sw_node *meta; /* a mapping (in arena), or NULL: what conditions read as actor.meta */
    sw_arena arena;
} sw_sec_actor;

/* A new actor with its id copied and no meta (refs 1); the caller builds meta in its arena
 * before anyone else sees it. */
sw_sec_actor *sw_sec_actor_new(const char *id, size_t len);
sw_sec_actor *sw_sec_actor_retain(sw_sec_actor *a);
void sw_sec_actor_release(sw_sec_actor *a); /* NULL is ignored */

typedef struct sw_sec_scope {
    atomic_uint refs;
    sw_security_set *set; /* the set its policies were taken from (a reference) */
    /* A policy it names is not in set (a reload removed it): it grants nothing, every check
     * with it is a deny. */
    bool broken;
    size_t n;
    const char **ids;    /* the policy ids, de-duplicated, in the order given */
    sw_sec_policy *pols; /* n compiled policies of set (copies, as in a service's context) */
    const char *group;   /* named_scope: the group it was made from; else NULL */
} sw_sec_scope;

/* The scope of these policy ids in set (duplicates counted once). NULL with "unknown policy
 * ID" in err when set has no such policy. */
sw_sec_scope *sw_sec_scope_new(sw_security_set *set, const char *const *ids, size_t n, char *err,
                               size_t errlen);
/* The scope of every policy that joins group (a qualified ns:g). NULL with "no policy joins
 * group ID" in err. */
sw_sec_scope *sw_sec_scope_group(sw_security_set *set, const char *group, char *err, size_t errlen);
/* The scope of these ids (and group, for a named scope) in set, made again after a copy (a
 * message, a reload): broken if set lacks one of them. Never NULL. */
sw_sec_scope *sw_sec_scope_rebuild(sw_security_set *set, const char *const *ids, size_t n,
                                   const char *group);
/* s with its policies taken from set: s itself (retained) when it was made from set, else a
 * new scope of the same ids, broken if set lacks one. Never NULL. */
sw_sec_scope *sw_sec_scope_bind(sw_sec_scope *s, sw_security_set *set);
sw_sec_scope *sw_sec_scope_retain(sw_sec_scope *s);
void sw_sec_scope_release(sw_sec_scope *s); /* NULL is ignored */

/* What a process runs as, or a token stands for. */
typedef struct sw_sec_identity {
    atomic_uint refs;
    sw_sec_actor *actor;
    sw_sec_scope *scope;
} sw_sec_identity;

/* Takes a reference to each (refs 1). */
sw_sec_identity *sw_sec_identity_new(sw_sec_actor *a, sw_sec_scope *s);
sw_sec_identity *sw_sec_identity_retain(sw_sec_identity *id);
void sw_sec_identity_release(sw_sec_identity *id); /* NULL is ignored */

/* The context an actor has under a scope (valid while both are held). */
sw_sec_ctx sw_sec_ctx_of_identity(const sw_sec_actor *a, const sw_sec_scope *s);

/* One check of actor a under scope s, always strict (an actor is there): a broken scope
 * denies. *decider as sw_security_decide (may be NULL). */
sw_sec_decision sw_sec_scope_decide(const sw_sec_scope *s, const sw_sec_actor *a,
                                    const char *action, size_t action_len, const char *resource,
                                    size_t resource_len, const sw_sec_value *meta,
                                    const sw_entry **decider);

#endif
