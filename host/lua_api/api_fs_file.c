/* The `fs` module's open files (docs/lua-api.md "fs"): fs.open and the file objects it gives
 * (read, read_line, write, seek, close), owned by the process that opened them; each call that
 * touches the disk is a job on the thread pool, run by the steps in api_fs_internal.h. */
#include <fcntl.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_fs_internal.h"
#include "fs.h"
#include "proc.h"

typedef struct file_obj {
    sw_fs_file *f; /* NULL once closed (fs.c clears it) */
    char name[];   /* the path it was opened with, for errors */
} file_obj;

static const char file_key = 0; /* its metatable, by address */

/* ---- open files ---- */

static void init_file(lua_State *L);

static int finish_open(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, 0);
    int acc = r->job.flags & O_ACCMODE, err;
    size_t len = strlen(r->resource);
    file_obj *o = lua_newuserdata(L, sizeof *o + len + 1); /* may raise: the job's fd closes */
    o->f = NULL;
    memcpy(o->name, r->resource, len + 1);
    sw_fs_file *f =
        sw_fs_file_new(sw_proc_of(L), r->job.fd, acc != O_WRONLY, acc != O_RDONLY, &err);
    if (!f) return fs_api_fail_err(L, r->resource, err, 0); /* the fd closes with the request */
    r->job.fd = -1;                                         /* the file's now */
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

int fs_api_open(lua_State *L)
{
    int flags = open_flags(L, luaL_optstring(L, 2, "r"));
    int acc = flags & O_ACCMODE;
    target t;
    int n = fs_api_resolve(L, 1, acc != O_WRONLY, acc != O_RDONLY, &t);
    if (n) return n;
    if (sw_fs_file_count(sw_proc_of(L)) >= SW_FS_MAX_FILES)
        return fs_api_fail_err(L, t.resource, SW_FS_ELIMIT, 0);
    sw_fs_req *r = fs_api_request(L, SW_FS_OP_OPEN, &t);
    r->job.flags = flags;
    r->job.mode = 0644;
    return fs_api_run(L, r, finish_open);
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
    sw_fs_req *r = fs_api_request(L, op, NULL);
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
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, 0);
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
    return fs_api_run(L, r, finish_fread);
}

static int finish_read_line(sw_fs_req *r, lua_State *L)
{
    sw_fs_job *j = &r->job;
    sw_fs_file *f = r->file;
    if (j->err) return fs_api_fail_err(L, r->resource, j->err, 0);
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
    return fs_api_run(L, r, finish_read_line);
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
    if (!fs_api_copy_data(L, r, data, len)) return sw_api_fail(L, "host memory limit reached");
    return fs_api_run(L, r, fs_api_finish_ok);
}

static int finish_seek(sw_fs_req *r, lua_State *L)
{
    if (r->job.err) return fs_api_fail_err(L, r->resource, r->job.err, 0);
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
    return fs_api_run(L, r, finish_seek);
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
