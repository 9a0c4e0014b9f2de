/* The `io` module, a safe subset (docs/lua-api.md "io"): io.write, io.flush and the two files
 * io.stdout and io.stderr with :write and :flush, onto the host's standard output and error
 * through runtime/std_streams.h (line-buffered per process, bounded, never blocking the
 * worker). The functions themselves are lua/io.lua, which waits for room; this file gives it
 * its primitives. Nothing here opens, reads or names a file. */
#include <lauxlib.h>

#include "api.h"
#include "proc.h"
#include "std_streams.h"
#include "task.h"

static const char FILE_MT = 0; /* its address keys the files' metatable */
static const char *const stream_names[] = {"stdout", "stderr"};

/* An argument error at the position of the code that called io (two levels up: through the
 * function of lua/io.lua that called this primitive), as Lua's own argument errors. */
static int arg_error(lua_State *L, int arg, const char *fname, const char *expected, int idx)
{
    luaL_where(L, 2);
    lua_pushfstring(L, "bad argument #%d to '%s' (%s expected, got %s)", arg, fname, expected,
                    luaL_typename(L, idx));
    lua_concat(L, 2);
    return lua_error(L);
}

/* stream_of(file, fname): the stream of an io file; raises naming fname otherwise. */
static int p_stream_of(lua_State *L)
{
    const char *fname = lua_tostring(L, 2);
    sw_std_stream *f = lua_touserdata(L, 1);
    bool ours = f && lua_getmetatable(L, 1);
    if (ours) {
        lua_pushlightuserdata(L, (void *)&FILE_MT);
        lua_rawget(L, LUA_REGISTRYINDEX);
        ours = lua_rawequal(L, -1, -2);
    }
    if (!ours) return arg_error(L, 1, fname, "io file", 1);
    lua_pushinteger(L, *f);
    return 1;
}

/* pack(...): the values as one string; the first that is not a string or number raises. */
static int p_pack(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++)
        if (!lua_isstring(L, i)) return arg_error(L, i, "write", "string", i);
    lua_concat(L, n); /* no values: the empty string */
    return 1;
}

/* put(stream, s, from, all) -> next from, waiting, sent (std_streams.h, sw_std_put). */
static int p_put(lua_State *L)
{
    sw_std_stream which = (sw_std_stream)lua_tointeger(L, 1);
    size_t len, from = (size_t)lua_tointeger(L, 3);
    const char *s = lua_tolstring(L, 2, &len);
    if (from > len) from = len;
    sw_std_progress r = sw_std_put(sw_proc_of(L), which, s + from, len - from, lua_toboolean(L, 4));
    if (r.failed) return luaL_error(L, "not enough memory");
    lua_pushinteger(L, (lua_Integer)(from + r.taken));
    lua_pushboolean(L, r.waiting);
    lua_pushinteger(L, (lua_Integer)r.sent);
    return 3;
}

static int p_drop(lua_State *L)
{
    sw_std_drop(sw_proc_of(L), (sw_std_stream)lua_tointeger(L, 1));
    return 0;
}

/* Whether the calling task may block here (a task, and no C call in between). */
static int p_can_wait(lua_State *L)
{
    lua_pushboolean(L, sw_task_current(L) && lua_isyieldable(L));
    return 1;
}

static int file_tostring(lua_State *L)
{
    sw_std_stream *f = lua_touserdata(L, 1);
    lua_pushfstring(L, "file (%s)", stream_names[*f]);
    return 1;
}

/* The files' metatable: __index holds write and flush (upvalues 1 and 2 of the builder). */
static void push_file(lua_State *L, sw_std_stream which, int methods)
{
    sw_std_stream *f = lua_newuserdata(L, sizeof *f);
    *f = which;
    lua_pushlightuserdata(L, (void *)&FILE_MT);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 3);
        lua_pushvalue(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, file_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushliteral(L, "io file");
        lua_setfield(L, -2, "__metatable");
        lua_pushlightuserdata(L, (void *)&FILE_MT);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    lua_setmetatable(L, -2);
}

/* io.type(x): "file" for io.stdout / io.stderr, else nil (no file is ever closed). */
static int io_type(lua_State *L)
{
    void *p = lua_touserdata(L, 1);
    bool file = false;
    if (p && lua_getmetatable(L, 1)) {
        lua_pushlightuserdata(L, (void *)&FILE_MT);
        lua_rawget(L, LUA_REGISTRYINDEX);
        file = lua_rawequal(L, -1, -2);
    }
    if (file) lua_pushliteral(L, "file");
    else lua_pushnil(L);
    return 1;
}

int sw_open_io(lua_State *L)
{
    lua_createtable(L, 0, 4); /* the module */
    int io = lua_gettop(L);
    lua_createtable(L, 0, 2); /* the files' methods */
    int methods = lua_gettop(L);
    push_file(L, SW_STDOUT, methods);
    lua_setfield(L, io, "stdout");
    push_file(L, SW_STDERR, methods);
    lua_setfield(L, io, "stderr");

    sw_api_load_shipped(L, "io");
    static const lua_CFunction prims[] = {p_pack,       p_put,      p_drop,     p_can_wait,
                                          sw_api_sleep, sw_api_now, p_stream_of};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++) lua_pushcfunction(L, prims[i]);
    lua_createtable(L, 2, 0);
    for (int i = 0; i < 2; i++) {
        lua_pushstring(L, stream_names[i]);
        lua_rawseti(L, -2, i);
    }
    lua_getfield(L, io, "stdout");
    lua_pushinteger(L, SW_STD_PATIENCE_S);
    lua_call(L, 10, 4); /* write, flush, file_write, file_flush */
    lua_setfield(L, methods, "flush");
    lua_setfield(L, methods, "write");
    lua_setfield(L, io, "flush");
    lua_setfield(L, io, "write");
    lua_pushcfunction(L, io_type);
    lua_setfield(L, io, "type");
    lua_settop(L, io);
    return 1;
}
