/* The policy engine (docs/security.md), without Lua: a policy set compiled from one registry snapshot
 * (every security.policy entry and every service's lifecycle.security), and the evaluation of
 * one check against a service's context. A set is immutable and reference-counted, so any
 * thread may evaluate with it while another publishes its successor; evaluation allocates
 * nothing (a regular expression match borrows a per-thread match block created once).
 *
 * Values of the call's `meta` come through a small accessor (sw_sec_source) so the engine
 * reads a caller's structure (a Lua table) in place; actor meta is read from the YAML tree. */
#ifndef STEWARD_SECURITY_H
#define STEWARD_SECURITY_H

#include <stdbool.h>
#include <stddef.h>

#include "registry.h"

typedef enum { SW_SEC_UNDEFINED, SW_SEC_ALLOW, SW_SEC_DENY } sw_sec_decision;

extern const char *const sw_sec_decision_names[]; /* "undefined", "allow", "deny" */

/* A value read from meta: a scalar, or a container the source can look into. */
typedef enum {
    SW_SV_MISSING,
    SW_SV_STRING,
    SW_SV_NUMBER,
    SW_SV_BOOL,
    SW_SV_CONTAINER,
    SW_SV_OTHER
} sw_sv_type;

typedef struct sw_sec_source sw_sec_source;

typedef struct sw_sec_value {
    sw_sv_type type;
    const char *s; /* STRING: bytes, valid while the check runs */
    size_t len;
    double num;               /* NUMBER */
    bool b;                   /* BOOL */
    const sw_sec_source *src; /* CONTAINER: who can look into it */
    const void *ref;          /* CONTAINER: the source's handle (a node, a stack slot) */
    long idx;
} sw_sec_value;

struct sw_sec_source {
    /* out = the value under key in the container c (SW_SV_MISSING when absent). */
    void (*field)(const sw_sec_value *c, const char *key, sw_sec_value *out);
    /* out = item i (from 0) of container c as a list; false past its end. */
    bool (*item)(const sw_sec_value *c, size_t i, sw_sec_value *out);
};

/* A YAML node as a value (containers read through the node source). */
void sw_sec_value_of_node(const sw_node *n, sw_sec_value *out);

typedef struct sw_sec_policy sw_sec_policy;

/* A service's compiled context: its actor and the de-duplicated policies from its `policies`
 * and `groups`, in registry order. */
typedef struct sw_sec_ctx {
    const char *service;
    const char *actor_id;      /* NULL: no actor */
    const sw_node *actor_meta; /* a mapping, or NULL */
    size_t n;
    const sw_sec_policy *policies; /* copies, so a check reads them in one sequential pass */
} sw_sec_ctx;

typedef struct sw_security_set sw_security_set;

/* Compiles the policy set of a snapshot, which it retains until freed. NULL with a message in
 * err only if a regular expression cannot be compiled (the loader has validated them). The
 * set starts with one reference. Thread: any. */
sw_security_set *sw_security_compile(const sw_registry *reg, char *err, size_t errlen);
sw_security_set *sw_security_retain(sw_security_set *s);
/* Drops one reference; the last frees the set and releases its snapshot. NULL is ignored. */
void sw_security_release(sw_security_set *s);

/* The lifecycle.security a service runs with: its own, else that of the nearest service.group
 * that contains it (and `from` = that entry); NULL if none declares one. */
const sw_security_ctx *sw_security_declared(const sw_entry *svc, const sw_entry **from);

/* The context of a service, or NULL if it has no lifecycle.security (nor a group of it). */
const sw_sec_ctx *sw_security_ctx_of(const sw_security_set *s, const char *service_id);
/* The registry snapshot the set was compiled from. */
const sw_registry *sw_security_registry(const sw_security_set *s);

/* Evaluates one check: deny-overrides, default undefined. With no actor (ctx NULL or without
 * actor id) strict mode denies and relaxed mode allows without evaluating. meta may be NULL
 * (no meta given). Allocates nothing; thread-safe. */
sw_sec_decision sw_security_check(const sw_sec_ctx *ctx, bool strict, const char *action,
                                  const char *resource, const sw_sec_value *meta);
/* The same with the lengths known (no strlen). */
sw_sec_decision sw_security_check_len(const sw_sec_ctx *ctx, bool strict, const char *action,
                                      size_t action_len, const char *resource, size_t resource_len,
                                      const sw_sec_value *meta);

/* sw_security_check_len that also tells which policy decided: *decider is the deny that
 * applied, else the first allow that applied, else NULL (undefined, or no actor). decider may
 * be NULL. The audit log names it (docs/security.md "Audit"). */
sw_sec_decision sw_security_decide(const sw_sec_ctx *ctx, bool strict, const char *action,
                                   size_t action_len, const char *resource, size_t resource_len,
                                   const sw_sec_value *meta, const sw_entry **decider);

/* The entry of the i-th policy of a context (for `graph --why`). */
const sw_entry *sw_sec_ctx_policy(const sw_sec_ctx *ctx, size_t i);

#endif
