/* The `fs` module: files in volumes (docs/lua-api.md "fs"). Paths are "volume_id:rel/path",
 * normalized (runtime/fs_path.h) and checked by the guard (fs.read / fs.write on the
 * normalized path) before the volume is even looked up; every call that touches the disk is a
 * job on libuv's thread pool (runtime/fs.h) that blocks only its task, in the five steps
 * (check; arm: queue the job; register the cleanup: the request's cancel lets the task go;
 * yield; resume with the results at its delivery). Open files are objects owned by the
 * process; fs.volume(id) gives a handle whose methods take paths relative to the volume. */
#include <fcntl.h>
#include <inttypes.h>
#include <lauxlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "fs.h"
#include "fs_path.h"
#include "proc.h"
#include "task.h"

typedef struct file_obj {
    sw_fs_file *f; /* NULL once closed (fs.c clears it) */
    char name[];   /* the path it was opened with, for errors */
} file_obj;

static const char file_key = 0, volume_key = 0; /* their metatables, by address */

/* ---- results ---- */

static const char *bytes(uint64_t n, char *buf)
{
    snprintf(buf, 24, "%" PRIu64, n);
    return buf;
}

/* nil, "<what>: <reason>" */
static int fail_err(lua_State *L, const char *what, int err, uint64_t cap)
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

static int ok(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static uint64_t read_cap(lua_State *L) { return sw_proc_of(L)->rt->limits.fs_read; }

/* ---- paths: parse, normalize, guard, look up ---- */

typedef struct target {
    char id[256];
    char rel[SW_FS_PATH_MAX];
    char resource[SW_FS_PATH_MAX + 260];
    const sw_fs_volume *vol;
} target;

/* The path at idx: 0 with *t filled, or the count of (nil, err) pushed. write: the call
 * changes something (fs.write; a read-only volume refuses it); read: it reads (fs.read). */
static int resolve(lua_State *L, int idx, bool read, bool write, target *t)
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
    int n = resolve(L, idx, false, false, &t);
    if (n) return n;
    if ((size_t)snprintf(out, len, "%s%s%s", t.vol->path, *t.rel ? "/" : "", t.rel) >= len)
        return sw_api_fail(L, "bad path: too long");
    return 0;
}

/* A request for op on t (its root, path and name copied: the job may outlive the process's
 * snapshot). Raises when out of memory. */
static sw_fs_req *request(lua_State *L, sw_fs_op op, const target *t)
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

/* A copy of the bytes to write, taken from the host's memory budget (the job may outlive the
 * string): false (r freed) when there is no room; raises when out of memory. */
static bool copy_data(lua_State *L, sw_fs_req *r, const char *data, size_t len)
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

/* Steps two to four: queue the job, register the cleanup, yield. */
static int run(lua_State *L, sw_fs_req *r, sw_fs_finish finish)
{
    sw_task *t = sw_task_current(L);
    if (!t || !lua_isyieldable(L)) {
        sw_fs_req_free(r);
        return sw_task_block(L, NULL); /* raises: no task can wait here */
    }
    lua_pushstring(L, r->resource ? r->resource : "file");
    const char *what = lua_tostring(L, -1); /* outlives r */
    int rc = sw_fs_submit(r, t, finish);
    if (rc != 0) return fail_err(L, what, rc, 0);
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
    if (r->job.err) return fail_err(L, r->resource, r->job.err, r->job.max);
    lua_pushlstring(L, r->job.data ? r->job.data : "", r->job.len);
    return 1;
}

static int finish_ok(sw_fs_req *r, lua_State *L)
{
    return r->job.err ? fail_err(L, r->resource, r->job.err, 0) : ok(L);
}

static int fs_read(lua_State *L)
{
    target t;
    int n = resolve(L, 1, true, false, &t);
    if (n) return n;
    sw_fs_req *r = request(L, SW_FS_OP_READ, &t);
    r->job.max = read_cap(L);
    return run(L, r, finish_data);
}

static int fs_write(lua_State *L)
{
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    check_opts(L, 3);
    bool append = opt_flag(L, 3, "append");
    unsigned mode = opt_mode(L, 3, 0644);
    target t;
    int n = resolve(L, 1, false, true, &t);
    if (n) return n;
    sw_fs_req *r = request(L, SW_FS_OP_WRITE, &t);
    r->job.append = append;
    r->job.mode = mode;
    if (!copy_data(L, r, data, len)) return sw_api_fail(L, "host memory limit reached");
    return run(L, r, finish_ok);
}

/* ---- directories and names ---- */

static const char *type_name(char c)
{
    return c == 'f' ? "file" : c == 'd' ? "directory" : c == 'l' ? "symlink" : "other";
}

static int finish_list(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fail_err(L, r->resource, r->job.err, 0);
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
    int n = resolve(L, 1, true, false, &t);
    if (n) return n;
    return run(L, request(L, SW_FS_OP_LIST, &t), finish_list);
}

static int finish_stat(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fail_err(L, r->resource, r->job.err, 0);
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
    int n = resolve(L, 1, true, false, &t);
    if (n) return n;
    return run(L, request(L, SW_FS_OP_STAT, &t), finish_stat);
}

static int fs_mkdir(lua_State *L)
{
    check_opts(L, 2);
    bool parents = opt_flag(L, 2, "parents");
    unsigned mode = opt_mode(L, 2, 0755);
    target t;
    int n = resolve(L, 1, false, true, &t);
    if (n) return n;
    sw_fs_req *r = request(L, SW_FS_OP_MKDIR, &t);
    r->job.parents = parents;
    r->job.mode = mode;
    return run(L, r, finish_ok);
}

static int fs_remove(lua_State *L)
{
    target t;
    int n = resolve(L, 1, false, true, &t);
    if (n) return n;
    return run(L, request(L, SW_FS_OP_REMOVE, &t), finish_ok);
}

static int fs_rename(lua_State *L)
{
    target from, to;
    int n = resolve(L, 1, false, true, &from);
    if (!n) n = resolve(L, 2, false, true, &to);
    if (n) return n;
    sw_fs_req *r = request(L, SW_FS_OP_RENAME, &from);
    r->job.root2 = strdup(to.vol->path);
    r->job.rel2 = strdup(to.rel);
    if (!r->job.root2 || !r->job.rel2) {
        sw_fs_req_free(r);
        return luaL_error(L, "out of memory");
    }
    return run(L, r, finish_ok);
}

/* ---- open files ---- */

static void init_file(lua_State *L);

static int finish_open(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fail_err(L, r->resource, r->job.err, 0);
    int acc = r->job.flags & O_ACCMODE, err;
    size_t len = strlen(r->resource);
    file_obj *o = lua_newuserdata(L, sizeof *o + len + 1); /* may raise: the job's fd closes */
    o->f = NULL;
    memcpy(o->name, r->resource, len + 1);
    sw_fs_file *f =
        sw_fs_file_new(sw_proc_of(L), r->job.fd, acc != O_WRONLY, acc != O_RDONLY, &err);
    if (!f) return fail_err(L, r->resource, err, 0); /* the fd closes with the request */
    r->job.fd = -1;                                  /* the file's now */
    sw_api_push_metatable(L, &file_key, init_file);
    lua_setmetatable(L, -2);
    sw_fs_file_bind(f, &o->f);
    return 1;
}

static int open_flags(lua_State *L, const char *mode)
{
    static const struct {
        const char *mode;
        int flags;
    } modes[] = {
        {"r", O_RDONLY}, {"w", O_WRONLY | O_CREAT | O_TRUNC}, {"a", O_WRONLY | O_CREAT | O_APPEND},
        {"r+", O_RDWR},  {"w+", O_RDWR | O_CREAT | O_TRUNC},  {"a+", O_RDWR | O_CREAT | O_APPEND}};
    char m[4] = {0};
    for (size_t i = 0, k = 0; mode[i] && k < 3; i++) /* "b" means nothing on POSIX */
        if (mode[i] != 'b') m[k++] = mode[i];
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (strcmp(modes[i].mode, m) == 0) return modes[i].flags;
    return luaL_argerror(L, 2, "expected a mode: \"r\", \"w\", \"a\", \"r+\", \"w+\" or \"a+\"");
}

static int fs_open(lua_State *L)
{
    int flags = open_flags(L, luaL_optstring(L, 2, "r"));
    int acc = flags & O_ACCMODE;
    target t;
    int n = resolve(L, 1, acc != O_WRONLY, acc != O_RDONLY, &t);
    if (n) return n;
    if (sw_fs_file_count(sw_proc_of(L)) >= SW_FS_MAX_FILES)
        return fail_err(L, t.resource, SW_FS_ELIMIT, 0);
    sw_fs_req *r = request(L, SW_FS_OP_OPEN, &t);
    r->job.flags = flags;
    r->job.mode = 0644;
    return run(L, r, finish_open);
}

/* The open file of the object at 1 (NULL: closed or another process's) and its name. */
static sw_fs_file *check_file(lua_State *L, const char **name)
{
    file_obj *o = sw_api_checkudata(L, 1, &file_key, "fs.file");
    *name = o->name;
    return o->f && o->f->proc == sw_proc_of(L) ? o->f : NULL;
}

/* A file op's request (its name for errors), or the (nil, err) count pushed in *n. */
static sw_fs_req *file_request(lua_State *L, sw_fs_op op, bool write, int *n)
{
    const char *name;
    sw_fs_file *f = check_file(L, &name);
    *n = !f                       ? sw_api_fail(L, "closed")
         : f->busy                ? sw_api_fail(L, "busy: another task is using the file")
         : write && !f->writable  ? sw_api_fail(L, "not open for writing")
         : !write && !f->readable ? sw_api_fail(L, "not open for reading")
                                  : 0;
    if (*n) return NULL;
    sw_fs_req *r = request(L, op, NULL);
    r->file = f;
    r->job.fd = f->fd;
    r->resource = strdup(name);
    if (!r->resource) {
        sw_fs_req_free(r);
        luaL_error(L, "out of memory");
    }
    return r;
}

static int finish_fread(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fail_err(L, r->resource, r->job.err, 0);
    if (r->job.len == 0) return sw_api_fail(L, "eof");
    lua_pushlstring(L, r->job.data, r->job.len);
    return 1;
}

static int f_read(lua_State *L)
{
    lua_Number want = luaL_checknumber(L, 2);
    if (!(want >= 1)) luaL_argerror(L, 2, "expected a byte count of at least 1");
    uint64_t cap = read_cap(L);
    size_t n_bytes = want > (lua_Number)cap ? (size_t)cap : (size_t)want;
    int n;
    sw_fs_req *r = file_request(L, SW_FS_OP_FREAD, false, &n);
    if (!r) return n;
    sw_fs_file *f = r->file;
    if (f->end > f->start) { /* read-ahead of read_line first */
        size_t k = f->end - f->start < n_bytes ? f->end - f->start : n_bytes;
        lua_pushlstring(L, f->buf + f->start, k);
        f->start += k;
        sw_fs_req_free(r);
        return 1;
    }
    r->job.max = n_bytes;
    return run(L, r, finish_fread);
}

static int finish_read_line(sw_fs_req *r, lua_State *L)
{
    sw_fs_job *j = &r->job;
    sw_fs_file *f = r->file;
    if (j->err) return fail_err(L, r->resource, j->err, 0);
    const char *nl = j->data ? memchr(j->data, '\n', j->len) : NULL;
    size_t line = nl ? (size_t)(nl - j->data) : j->len, taken = 0;
    int results = 2;
    if (!nl && !j->eof) { /* no "\n" within SW_FS_LINE_MAX: the bytes stay for read(n) */
        lua_pushnil(L);
        lua_pushfstring(L, "%s: line too long (at most %d bytes)", r->resource, SW_FS_LINE_MAX);
    } else if (!nl && line == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "eof");
    } else { /* a line, or the last one without its "\n" */
        lua_pushlstring(L, j->data, line && nl && j->data[line - 1] == '\r' ? line - 1 : line);
        taken = nl ? line + 1 : line;
        results = 1;
    }
    if (f && j->data) { /* what is left is the file's read-ahead again */
        free(f->buf);
        f->buf = j->data;
        f->start = taken;
        f->end = j->len;
        j->data = NULL;
    }
    return results;
}

static int f_read_line(lua_State *L)
{
    int n;
    sw_fs_req *r = file_request(L, SW_FS_OP_FREAD_LINE, false, &n);
    if (!r) return n;
    sw_fs_file *f = r->file;
    if (f->buf) { /* the read-ahead goes to the job, moved to the front */
        memmove(f->buf, f->buf + f->start, f->end - f->start);
        r->job.len = f->end - f->start;
        r->job.data = f->buf;
        f->buf = NULL;
        f->start = f->end = 0;
    }
    return run(L, r, finish_read_line);
}

static int f_write(lua_State *L)
{
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    int n;
    sw_fs_req *r = file_request(L, SW_FS_OP_FWRITE, true, &n);
    if (!r) return n;
    r->job.unread = r->file->end - r->file->start; /* the position the caller sees */
    sw_fs_file_drop_buffer(r->file);
    if (!copy_data(L, r, data, len)) return sw_api_fail(L, "host memory limit reached");
    return run(L, r, finish_ok);
}

static int finish_seek(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fail_err(L, r->resource, r->job.err, 0);
    lua_pushnumber(L, (lua_Number)r->job.pos);
    return 1;
}

static int f_seek(lua_State *L)
{
    static const char *const whences[] = {"set", "cur", "end", NULL};
    static const int values[] = {SEEK_SET, SEEK_CUR, SEEK_END};
    int w = luaL_checkoption(L, 2, "cur", whences);
    lua_Number off = luaL_optnumber(L, 3, 0);
    const char *name;
    sw_fs_file *f = check_file(L, &name);
    int n;
    sw_fs_req *r = file_request(L, SW_FS_OP_FSEEK, f && !f->readable, &n);
    if (!r) return n;
    r->job.whence = values[w];
    r->job.offset = (int64_t)off;
    r->job.unread = f->end - f->start;
    sw_fs_file_drop_buffer(f);
    return run(L, r, finish_seek);
}

static int f_close(lua_State *L)
{
    const char *name;
    sw_fs_file *f = check_file(L, &name);
    if (!f) return ok(L);
    if (f->busy) return sw_api_fail(L, "busy: another task is using the file");
    sw_fs_file_close(f); /* its fd closes on the thread pool; nothing to wait for */
    return ok(L);
}

static int file_gc(lua_State *L)
{
    file_obj *o = lua_touserdata(L, 1);
    if (o->f) sw_fs_file_close(o->f);
    return 0;
}

static int file_tostring(lua_State *L)
{
    file_obj *o = lua_touserdata(L, 1);
    lua_pushfstring(L, "fs.file: %s%s", o->name, o->f ? "" : " (closed)");
    return 1;
}

static void init_file(lua_State *L)
{
    static const luaL_Reg methods[] = {{"read", f_read},   {"read_line", f_read_line},
                                       {"write", f_write}, {"seek", f_seek},
                                       {"close", f_close}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, file_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, file_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "fs.file");
    lua_setfield(L, -2, "__metatable");
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

#define VOLUME_METHOD(name, paths)    \
    static int v_##name(lua_State *L) \
    {                                 \
        volume_paths(L, paths);       \
        return fs_##name(L);          \
    }
VOLUME_METHOD(read, 1)
VOLUME_METHOD(write, 1)
VOLUME_METHOD(open, 1)
VOLUME_METHOD(list, 1)
VOLUME_METHOD(stat, 1)
VOLUME_METHOD(mkdir, 1)
VOLUME_METHOD(remove, 1)
VOLUME_METHOD(rename, 2)

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
        {"read", fs_read},     {"write", fs_write}, {"open", fs_open},     {"list", fs_list},
        {"stat", fs_stat},     {"mkdir", fs_mkdir}, {"remove", fs_remove}, {"rename", fs_rename},
        {"volume", fs_volume}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
