/* A registry snapshot: every entry of an app directory, validated, with references resolved
 * and the service dependency graph built. Immutable once loaded, so any thread may read it; a
 * reload loads a new snapshot beside the old one. Knows nothing of Lua. */
#ifndef STEWARD_REGISTRY_H
#define STEWARD_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>

#include "arena.h"
#include "diag.h"
#include "entry.h"
#include "graph.h"
#include "strmap.h"

typedef struct sw_registry {
    sw_arena arena;
    const char *root; /* the app directory as given */
    size_t n_files;
    size_t n_entries;
    sw_entry **entries; /* sorted path order, then order within each file */
    sw_strmap ids;      /* id -> sw_entry */
    sw_strmap env;      /* variable name -> sw_env_exposed (env_vars.h) */
    sw_graph graph;
    size_t n_services;
    atomic_uint refs; /* 1 at load; see sw_registry_retain */
} sw_registry;

/* A file given in memory (tests, fuzzing). `path` is shown in errors; file:// sources resolve
 * against its directory. */
typedef struct sw_registry_file {
    const char *path;
    const char *text;
    size_t len;
} sw_registry_file;

/* Loads every *.yaml / *.yml file under dir (recursively, sorted path order, skipping names
 * that start with "."). Returns the snapshot, or NULL after adding every error to diags
 * (diags is not sorted: call sw_diags_finish). Never exits. */
sw_registry *sw_registry_load_dir(const char *dir, sw_diags *diags);
/* Same, from files in memory, which must already be in the intended order. */
sw_registry *sw_registry_load_files(const char *root, const sw_registry_file *files, size_t n,
                                    sw_diags *diags);
/* A snapshot is shared by reference: whoever keeps one past the loader's (the runtime, each
 * process, a compiled policy set) retains it, and sw_registry_free drops one reference,
 * freeing the snapshot with the last. Both are thread-safe; NULL is ignored. */
const sw_registry *sw_registry_retain(const sw_registry *r);
void sw_registry_free(const sw_registry *r);

const sw_entry *sw_registry_get(const sw_registry *r, const char *id);

#endif
