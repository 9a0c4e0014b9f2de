/* Internal to the policy engine: the compiled forms security.c builds and security_eval.c
 * reads. Everything lives in the set's arena and never changes after compilation. */
#ifndef STEWARD_SECURITY_SET_H
#define STEWARD_SECURITY_SET_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "security.h"

/* "*" (prefix with len 0), a literal, or a literal prefix (a trailing "*"). head/mask hold
 * its first (up to) 8 bytes so most mismatches cost one compare of two words. */
typedef struct sec_pattern {
    const char *lit;
    size_t len;
    bool prefix;
    uint64_t head, mask;
} sec_pattern;

/* The first min(len, 8) bytes of s as a word (the rest zero), and the mask of those bytes. */
static inline uint64_t sec_head(const char *s, size_t len, uint64_t *mask)
{
    uint64_t h = 0;
    size_t n = len < 8 ? len : 8;
    memcpy(&h, s, n);
    if (mask) *mask = n == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (n * 8)) - 1);
    return h;
}

/* Whether a policy entry joins a (qualified) group. */
static inline bool sec_in_group(const sw_entry *policy, const char *group)
{
    const sw_strlist *g = &policy->as.policy.groups;
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->v[i], group) == 0) return true;
    return false;
}

typedef struct sec_cond {
    const sw_field_path *field;
    int op;             /* sw_operator */
    bool has_value;     /* else value_from, or exists with no value */
    sw_sec_value value; /* from the YAML node */
    const sw_field_path *value_from;
    bool want_present; /* exists / nexists: what holds */
    pcre2_code *re;    /* matches / nmatches */
} sec_cond;

struct sw_sec_policy {
    const sw_entry *entry;
    bool deny;
    size_t n_actions, n_resources, n_conds;
    sec_pattern *actions, *resources;
    sec_cond *conds;
};

struct sw_security_set {
    atomic_uint refs;
    const sw_registry *reg;
    sw_arena arena;
    size_t n_policies;
    sw_sec_policy *policies; /* registry order */
    sw_strmap services;      /* service id -> sw_sec_ctx */
};

#endif
