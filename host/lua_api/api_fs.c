/* The `fs` module: files in volumes (docs/lua-api.md "fs"). Paths are "volume_id:rel/path",
 * normalized (runtime/fs_path.h) and checked by the guard (fs.read / fs.write on the
 * normalized path) before the volume is even looked up; every call that touches the disk is a
 * job on libuv's thread pool (runtime/fs.h) that blocks only its task, in the five steps
 * (check; arm: queue the job; register the cleanup: the request's cancel lets the task go;
 * yield; resume with the results at its delivery). fs.volume(id) gives a handle whose methods
 * take paths relative to the volume. This file: the shared steps (api_fs_internal.h), whole
 * files, directories and names, volume handles and the module's table; fs.open and the open
 * file objects are in api_fs_file.c. */
#include <inttypes.h>
#include <lauxlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "api_fs_internal.h"
#include "fs.h"
#include "fs_path.h"
#include "proc.h"
#include "task.h"

static const char volume_key = 0; /* its metatable, by address */

/* ---- results ---- */

static const char *bytes(uint64_t n, char *buf)
{
    snprintf(buf, 24, "%" PRIu64, n);
    return buf;
}

int fs_api_fail_err(lua_State *L, const char *what, int err, uint64_t cap)
{
    char num[24];
    lua_pushnil(L);
    if (err == SW_FS_ETOOBIG)
        lua_pushfstring(L, "%s: file too large (at most %s bytes)", what, bytes(cap, num));
    else if (err == SW_FS_ELIMIT)
        lua_pushfstring(L, "too many open files (at most %d per process)", SW_FS_MAX_FILES);
    else if (err == SW_FS_ETHREAD) lua_pushliteral(L, "fs: not on the worker running the process");
    else if (err == SW_FS_ETOOMANY)
        lua_pushfstring(L, "%s: too many entries (at most %d)", what, SW_FS_LIST_MAX);
    else lua_pushfstring(L, "%s: %s", what, sw_fs_strerror(err));
    return 2;
}

/* ---- paths: parse, normalize, guard, look up ---- */

int fs_api_resolve(lua_State *L, int idx, bool read, bool write, target *t)
{
    size_t len;
    const char *path = luaL_checklstring(L, idx, &len);
    const char *rel;
    if (len >= SW_FS_PATH_MAX || strlen(path) != len)
        return sw_api_fail(L, "bad path: too long or has a NUL byte");
    if (!sw_fs_split(path, t->id, sizeof t->id, &rel))
        return sw_api_failf(L, "bad path \"%s\": expected volume_id:path", path);
    if (sw_fs_normalize(rel, t->rel, sizeof t->rel) != 0)
        return sw_api_failf(L, "bad path \"%s\": it leaves the volume", path);
    snprintf(t->resource, sizeof t->resource, "%s:%s", t->id, t->rel);
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && read && !ctx->allowed(L, "fs.read", t->resource))
        return sw_push_denied(L, "fs.read", t->resource);
    if (ctx->allowed && write && !ctx->allowed(L, "fs.write", t->resource))
        return sw_push_denied(L, "fs.write", t->resource);
    const sw_entry *e = ctx->registry ? sw_registry_get(ctx->registry, t->id) : NULL;
    if (!e || e->kind != SW_KIND_FS_VOLUME) return sw_api_failf(L, "no such volume: %s", t->id);
    t->vol = &e->as.fs_volume;
    if (write && t->vol->readonly) return sw_api_failf(L, "read-only volume: %s", t->id);
    return 0;
}

int sw_api_fs_local_path(lua_State *L, int idx, char *out, size_t len)
{
    target t;
    int n = fs_api_resolve(L, idx, false, false, &t);
    if (n) return n;
    if ((size_t)snprintf(out, len, "%s%s%s", t.vol->path, *t.rel ? "/" : "", t.rel) >= len)
        return sw_api_fail(L, "bad path: too long");
    return 0;
}

sw_fs_req *fs_api_request(lua_State *L, sw_fs_op op, const target *t)
{
    sw_fs_req *r = sw_fs_req_new(sw_proc_of(L), op);
    if (r) r->job.budget = &sw_proc_of(L)->rt->memory;
    if (r && t) {
        r->job.root = strdup(t->vol->path);
        r->job.rel = strdup(t->rel);
        r->resource = strdup(t->resource);
        if (!r->job.root || !r->job.rel || !r->resource) {
            sw_fs_req_free(r);
            r = NULL;
        }
    }
    if (!r) luaL_error(L, "out of memory");
    return r;
}

bool fs_api_copy_data(lua_State *L, sw_fs_req *r, const char *data, size_t len)
{
    if (!sw_fs_job_take(&r->job, len)) {
        sw_fs_req_free(r);
        return false;
    }
    r->job.data = malloc(len ? len : 1);
    if (!r->job.data) {
        sw_fs_req_free(r);
        luaL_error(L, "out of memory");
    }
    memcpy(r->job.data, data, len);
    r->job.len = len;
    return true;
}

int fs_api_run(lua_State *L, sw_fs_req *r, sw_fs_finish finish)
{
    sw_task *t = sw_task_current(L);
    if (!t || !lua_isyieldable(L)) {
        sw_fs_req_free(r);
        return sw_task_block(L, NULL); /* raises: no task can wait here */
    }
    lua_pushstring(L, r->resource ? r->resource : "file");
    const char *what = lua_tostring(L, -1); /* outlives r */
    int rc = sw_fs_submit(r, t, finish);
    if (rc != 0) return fs_api_fail_err(L, what, rc, 0);
    lua_pop(L, 1);
    return sw_task_block(L, &r->wait);
}

static unsigned opt_mode(lua_State *L, int opts, unsigned dflt)
{
    if (lua_isnoneornil(L, opts)) return dflt;
    lua_getfield(L, opts, "mode");
    unsigned mode = dflt;
    if (lua_type(L, -1) == LUA_TNUMBER) {
        lua_Number n = lua_tonumber(L, -1);
        if (!(n >= 0 && n <= 07777 && n == (unsigned)n))
            luaL_error(L, "fs: mode: expected permission bits (0 to 07777)");
        mode = (unsigned)n;
    } else if (lua_type(L, -1) == LUA_TSTRING) {
        char *end;
        const char *s = lua_tostring(L, -1);
        unsigned long m = strtoul(s, &end, 8);
        if (!*s || *end || m > 07777)
            luaL_error(L, "fs: mode: expected octal permission bits (\"0644\")");
        mode = (unsigned)m;
    } else if (!lua_isnil(L, -1)) {
        luaL_error(L, "fs: mode: expected permission bits (0644 as a number or \"0644\")");
    }
    lua_pop(L, 1);
    return mode;
}

static bool opt_flag(lua_State *L, int opts, const char *name)
{
    if (lua_isnoneornil(L, opts)) return false;
    lua_getfield(L, opts, name);
    bool b = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return b;
}

static void check_opts(lua_State *L, int idx)
{
    if (!lua_isnoneornil(L, idx)) luaL_checktype(L, idx, LUA_TTABLE);
}

/* ---- whole files ---- */

static int finish_data(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, r->job.max);
    lua_pushlstring(L, r->job.data ? r->job.data : "", r->job.len);
    return 1;
}

int fs_api_finish_ok(sw_fs_req *r, lua_State *L)
{
    return r->job.err ? fs_api_fail_err(L, r->resource, r->job.err, 0) : ok(L);
}

static int fs_read(lua_State *L)
{
    target t;
    int n = fs_api_resolve(L, 1, true, false, &t);
    if (n) return n;
    sw_fs_req *r = fs_api_request(L, SW_FS_OP_READ, &t);
    r->job.max = read_cap(L);
    return fs_api_run(L, r, finish_data);
}

static int fs_write(lua_State *L)
{
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    check_opts(L, 3);
    bool append = opt_flag(L, 3, "append");
    unsigned mode = opt_mode(L, 3, 0644);
    target t;
    int n = fs_api_resolve(L, 1, false, true, &t);
    if (n) return n;
    sw_fs_req *r = fs_api_request(L, SW_FS_OP_WRITE, &t);
    r->job.append = append;
    r->job.mode = mode;
    if (!fs_api_copy_data(L, r, data, len)) return sw_api_fail(L, "host memory limit reached");
    return fs_api_run(L, r, fs_api_finish_ok);
}

/* ---- directories and names ---- */

static const char *type_name(char c)
{
    return c == 'f' ? "file" : c == 'd' ? "directory" : c == 'l' ? "symlink" : "other";
}

static int finish_list(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, 0);
    lua_newtable(L);
    int i = 0;
    for (size_t at = 0; at < r->job.len; i++) {
        const char *e = r->job.data + at;
        lua_createtable(L, 0, 2);
        lua_pushstring(L, e + 1);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, type_name(e[0]));
        lua_setfield(L, -2, "type");
        lua_rawseti(L, -2, i + 1);
        at += strlen(e + 1) + 2;
    }
    return 1;
}

static int fs_list(lua_State *L)
{
    target t;
    int n = fs_api_resolve(L, 1, true, false, &t);
    if (n) return n;
    return fs_api_run(L, fs_api_request(L, SW_FS_OP_LIST, &t), finish_list);
}

static int finish_stat(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, 0);
    const struct stat *st = &r->job.st;
    lua_createtable(L, 0, 4);
    lua_pushstring(L, S_ISREG(st->st_mode)   ? "file"
                      : S_ISDIR(st->st_mode) ? "directory"
                      : S_ISLNK(st->st_mode) ? "symlink"
                                             : "other");
    lua_setfield(L, -2, "type");
    lua_pushnumber(L, (lua_Number)st->st_size);
    lua_setfield(L, -2, "size");
    lua_pushnumber(L, (lua_Number)(st->st_mode & 07777));
    lua_setfield(L, -2, "mode");
    lua_pushnumber(L, (lua_Number)st->st_mtim.tv_sec + (lua_Number)st->st_mtim.tv_nsec / 1e9);
    lua_setfield(L, -2, "mtime");
    return 1;
}

static int fs_stat(lua_State *L)
{
    target t;
    int n = fs_api_resolve(L, 1, true, false, &t);
    if (n) return n;
    return fs_api_run(L, fs_api_request(L, SW_FS_OP_STAT, &t), finish_stat);
}

static int fs_mkdir(lua_State *L)
{
    check_opts(L, 2);
    bool parents = opt_flag(L, 2, "parents");
    unsigned mode = opt_mode(L, 2, 0755);
    target t;
    int n = fs_api_resolve(L, 1, false, true, &t);
    if (n) return n;
    sw_fs_req *r = fs_api_request(L, SW_FS_OP_MKDIR, &t);
    r->job.parents = parents;
    r->job.mode = mode;
    return fs_api_run(L, r, fs_api_finish_ok);
}

static int fs_remove(lua_State *L)
{
    target t;
    int n = fs_api_resolve(L, 1, false, true, &t);
    if (n) return n;
    return fs_api_run(L, fs_api_request(L, SW_FS_OP_REMOVE, &t), fs_api_finish_ok);
}

static int fs_rename(lua_State *L)
{
    target from, to;
    int n = fs_api_resolve(L, 1, false, true, &from);
    if (!n) n = fs_api_resolve(L, 2, false, true, &to);
    if (n) return n;
    sw_fs_req *r = fs_api_request(L, SW_FS_OP_RENAME, &from);
    r->job.root2 = strdup(to.vol->path);
    r->job.rel2 = strdup(to.rel);
    if (!r->job.root2 || !r->job.rel2) {
        sw_fs_req_free(r);
        return luaL_error(L, "out of memory");
    }
    return fs_api_run(L, r, fs_api_finish_ok);
}

/* ---- volume handles: the same calls on paths relative to one volume ---- */

/* self at 1, then `paths` relative paths: each becomes "<id>:<rel>", self is removed. */
static void volume_paths(lua_State *L, int paths)
{
    const char *id = sw_api_checkudata(L, 1, &volume_key, "fs.volume");
    for (int i = 2; i < 2 + paths; i++) {
        const char *rel = luaL_checkstring(L, i);
        lua_pushfstring(L, "%s:%s", id, rel);
        lua_replace(L, i);
    }
    lua_remove(L, 1);
}

#define VOLUME_METHOD(name, fn, paths) \
    static int v_##name(lua_State *L)  \
    {                                  \
        volume_paths(L, paths);        \
        return fn(L);                  \
    }
VOLUME_METHOD(read, fs_read, 1)
VOLUME_METHOD(write, fs_write, 1)
VOLUME_METHOD(open, fs_api_open, 1) /* api_fs_file.c */
VOLUME_METHOD(list, fs_list, 1)
VOLUME_METHOD(stat, fs_stat, 1)
VOLUME_METHOD(mkdir, fs_mkdir, 1)
VOLUME_METHOD(remove, fs_remove, 1)
VOLUME_METHOD(rename, fs_rename, 2)

static int volume_tostring(lua_State *L)
{
    lua_pushfstring(L, "fs.volume: %s", (const char *)lua_touserdata(L, 1));
    return 1;
}

static void init_volume(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"read", v_read},     {"write", v_write},   {"open", v_open},
        {"list", v_list},     {"stat", v_stat},     {"mkdir", v_mkdir},
        {"remove", v_remove}, {"rename", v_rename}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, volume_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "fs.volume");
    lua_setfield(L, -2, "__metatable");
}

static int fs_volume(lua_State *L)
{
    size_t len;
    const char *id = luaL_checklstring(L, 1, &len);
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    const sw_entry *e = ctx->registry ? sw_registry_get(ctx->registry, id) : NULL;
    if (!e || e->kind != SW_KIND_FS_VOLUME) return sw_api_failf(L, "no such volume: %s", id);
    char *copy = lua_newuserdata(L, len + 1);
    memcpy(copy, id, len + 1);
    sw_api_push_metatable(L, &volume_key, init_volume);
    lua_setmetatable(L, -2);
    return 1;
}

int sw_open_fs(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"read", fs_read},     {"write", fs_write}, {"open", fs_api_open}, {"list", fs_list},
        {"stat", fs_stat},     {"mkdir", fs_mkdir}, {"remove", fs_remove}, {"rename", fs_rename},
        {"volume", fs_volume}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
