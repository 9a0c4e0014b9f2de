/* Internal to the policy engine: the compiled forms security.c builds and security_eval.c
 * reads. Everything lives in the set's arena and never changes after compilation. */
#ifndef STEWARD_SECURITY_SET_H
#define STEWARD_SECURITY_SET_H

#include <stdatomic.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "security.h"

/* "*" (prefix with len 0), a literal, or a literal prefix (a trailing "*"). */
typedef struct sec_pattern {
    const char *lit;
    size_t len;
    bool prefix;
} sec_pattern;

typedef struct sec_cond {
    const sw_field_path *field;
    int op;                       /* sw_operator */
    bool has_value;               /* else value_from, or exists with no value */
    sw_sec_value value;           /* from the YAML node */
    const sw_field_path *value_from;
    bool want_present;            /* exists / nexists: what holds */
    pcre2_code *re;               /* matches / nmatches */
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
    sw_sec_policy *policies;      /* registry order */
    sw_strmap services;           /* service id -> sw_sec_ctx */
};

#endif
