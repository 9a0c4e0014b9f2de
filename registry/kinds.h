/* The kinds the registry accepts: their names, field schemas and defaults (docs/registry.md, docs/supervision.md). */
#ifndef STEWARD_KINDS_H
#define STEWARD_KINDS_H

#include "schema.h"

typedef struct sw_kind_def {
    const char *name;
    sw_kind kind;
    const sw_schema *schema; /* NULL: free-form (registry.entry) */
    void (*defaults)(sw_entry *e);
} sw_kind_def;

/* NULL if the name is not a kind. */
const sw_kind_def *sw_kind_lookup(const char *name);
extern const char *const sw_kind_names[];
/* Every kind's definition, n in *n: what `steward schema` describes. */
const sw_kind_def *sw_kind_defs(size_t *n);

/* Parses the kind's fields of entry e (name/kind/meta already taken) from its mapping. */
void sw_kind_parse(sw_parse *p, const sw_kind_def *def, sw_entry *e);

/* The host's Lua module names: an import alias may not shadow one, and `require` of one
 * returns the host module (the one list of them; the host checks against it). */
extern const char *const sw_host_module_names[];
/* The fields of lifecycle.restart: what service.set_restart_policy checks a table against. */
extern const sw_schema *const sw_restart_schema;

/* Shared with the kinds of kinds_http.c: a service's lifecycle and its security field. */
extern const sw_schema sw_lifecycle_schema;
void sw_lifecycle_defaults(sw_lifecycle *lc);
void sw_parse_security(sw_parse *p, const sw_node *n, void *dst);

/* http.service, http.router, http.endpoint (kinds_http.c). */
extern const sw_schema sw_http_service_schema, sw_http_router_schema, sw_http_endpoint_schema;
void sw_http_service_defaults(sw_entry *e);
void sw_http_router_defaults(sw_entry *e);

#endif
