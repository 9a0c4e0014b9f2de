/* ${env:NAME} and ${env:NAME:-default} in YAML scalar values (docs/registry.md, "Environment
 * variables in values"): replaced by the host environment's value when the file is loaded (and
 * at each reload). `$${` writes a literal `${`; any other `${...}` is left as written. Keys are
 * never substituted (yaml_tree.c calls this for values only). Thread: any (getenv; the host
 * never changes its own environment). */
#ifndef STEWARD_ENV_SUBST_H
#define STEWARD_ENV_SUBST_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

/* Variable names: [A-Za-z_][A-Za-z0-9_]* (the shell's). */
bool sw_env_name_valid(const char *s, size_t len);

/* Whether text holds anything to substitute (a `${env:` or a `$${`): the common case, no. */
bool sw_env_subst_needed(const char *text, size_t len);

/* Substitutes into a new NUL-terminated arena string (*out, *out_len). 0, or -1 with a message
 * in err: a malformed reference, or a variable that is not set and has no default. */
int sw_env_subst(sw_arena *a, const char *text, size_t len, const char **out, size_t *out_len,
                 char *err, size_t errlen);

#endif
