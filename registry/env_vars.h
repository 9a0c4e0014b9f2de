/* The env.variables kind (docs/registry.md): which variables `env.get` may read, with their
 * defaults and whether the host environment gives the value. The loader indexes every entry's
 * variables into the snapshot (sw_registry.env), so a lookup is one hash probe. */
#ifndef STEWARD_ENV_VARS_H
#define STEWARD_ENV_VARS_H

#include <stdbool.h>

#include "registry.h"
#include "schema.h"

/* One exposed variable, merged over every env.variables entry of the snapshot. */
typedef struct sw_env_exposed {
    const char *name;
    const char *fallback;  /* its default (a vars value), or NULL */
    bool from_process;     /* listed in some entry's from_process */
    const sw_entry *entry; /* the entry giving the default (or the first listing it) */
} sw_env_exposed;

extern const sw_schema sw_env_variables_schema;

/* The variable `name` as the snapshot exposes it, or NULL when no env.variables entry lists
 * it. Thread: any (the snapshot is immutable). */
const sw_env_exposed *sw_registry_env(const sw_registry *r, const char *name);

/* The value env.get gives: the host environment's when the variable is from_process and set
 * there, else its default; NULL when it has neither. */
const char *sw_env_value(const sw_env_exposed *v);

#endif
