/* The `fs` module's shared steps (docs/lua-api.md "fs"): a path resolved to its volume, a
 * request for the thread pool, the bytes it writes, running it, and the results. Shared by
 * api_fs.c (whole files, directories, volume handles, the module) and api_fs_file.c (fs.open
 * and open files). Internal to lua_api. */
#ifndef STEWARD_API_FS_INTERNAL_H
#define STEWARD_API_FS_INTERNAL_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs.h"
#include "fs_path.h"
#include "proc.h"

/* ---- paths: parse, normalize, guard, look up ---- */

typedef struct target {
    char id[256];
    char rel[SW_FS_PATH_MAX];
    char resource[SW_FS_PATH_MAX + 260];
    const sw_fs_volume *vol;
} target;

/* The path at idx: 0 with *t filled, or the count of (nil, err) pushed. write: the call
 * changes something (fs.write; a read-only volume refuses it); read: it reads (fs.read). */
int fs_api_resolve(lua_State *L, int idx, bool read, bool write, target *t);

/* A request for op on t (its root, path and name copied: the job may outlive the process's
 * snapshot). Raises when out of memory. */
sw_fs_req *fs_api_request(lua_State *L, sw_fs_op op, const target *t);

/* A copy of the bytes to write, taken from the host's memory budget (the job may outlive the
 * string): false (r freed) when there is no room; raises when out of memory. */
bool fs_api_copy_data(lua_State *L, sw_fs_req *r, const char *data, size_t len);

/* Steps two to four: queue the job, register the cleanup, yield. */
int fs_api_run(lua_State *L, sw_fs_req *r, sw_fs_finish finish);

/* ---- results ---- */

/* nil, "<what>: <reason>" */
int fs_api_fail_err(lua_State *L, const char *what, int err, uint64_t cap);

static inline int ok(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static inline uint64_t read_cap(lua_State *L) { return sw_proc_of(L)->rt->limits.fs_read; }

/* The finish of a call that answers true (or nil, err). */
int fs_api_finish_ok(sw_fs_req *r, lua_State *L);

/* ---- open files (api_fs_file.c) ---- */

/* fs.open(path [, mode]) */
int fs_api_open(lua_State *L);

#endif
