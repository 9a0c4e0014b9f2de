/* What loader.c (files and entries) and loader_checks.c (checks across entries) share. */
#ifndef STEWARD_LOADER_INTERNAL_H
#define STEWARD_LOADER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "registry.h"
#include "schema.h"

typedef struct loader {
    sw_registry *r;
    sw_diags *diags;
    sw_parse parse;
    size_t cap_entries;
    bool failed;
} loader;

/* An error at node n of file (line 1 when n is NULL), for entry and field; marks the load
 * failed. */
void sw_loader_error_at(loader *L, const char *file, const sw_node *n, const char *entry,
                        const char *field, const char *msg);
/* Resolves every pending reference of the snapshot (an error for each that names no entry of
 * an accepted kind). */
void sw_loader_resolve_refs(loader *L);
/* Checks the service.group trees: no loops, no child in two groups. */
void sw_loader_check_groups(loader *L);
/* Checks watchdog, health and ready: health (services only; health needs a check). */
void sw_loader_check_liveness(loader *L);
/* Indexes the variables of every env.variables entry (env_vars.c); a default given twice is an
 * error. */
void sw_loader_index_env(loader *L);

#endif
