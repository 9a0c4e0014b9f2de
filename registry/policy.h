/* Parsing and validation of security.policy entries (docs/security.md): patterns, conditions,
 * operators and groups. Evaluation lives in the host; this file only guarantees that every
 * loaded policy is well-formed. */
#ifndef STEWARD_POLICY_H
#define STEWARD_POLICY_H

#include "schema.h"

extern const sw_schema sw_policy_entry_schema;

/* Parses "actor.id", "actor.meta.<path>", "action", "resource", "meta.<path>". */
bool sw_field_path_parse(sw_arena *a, const char *text, sw_field_path *out);
/* True if the pattern is "*", a literal, or a literal followed by one trailing "*". */
bool sw_pattern_valid(const char *pattern);

extern const char *const sw_operator_names[];

#endif
