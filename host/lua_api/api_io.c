/* The `io` module, a safe subset (docs/lua-api.md "io"): io.write, io.flush and the two files
 * io.stdout and io.stderr with :write and :flush, onto the host's standard output and error
 * through runtime/std_streams.h (line-buffered per process, bounded, never blocking the
 * worker). Nothing here opens, reads or names a file. */
#include <lauxlib.h>

#include "api.h"
#include "proc.h"
#include "std_streams.h"

static const char FILE_MT = 0; /* its address keys the files' metatable */
static const char *const stream_names[] = {"stdout", "stderr"};

static sw_std_stream check_file(lua_State *L, int idx)
{
    return *(sw_std_stream *)sw_api_checkudata(L, idx, &FILE_MT, "io file");
}

/* The result of a write or flush: the file (at file_idx), or nil, err when bytes were dropped. */
static int result(lua_State *L, bool ok, sw_std_stream which, int file_idx)
{
    if (ok) {
        lua_pushvalue(L, file_idx);
        return 1;
    }
    lua_pushnil(L);
    lua_pushfstring(L, "io: %s is not keeping up: output dropped (%d KB waiting)",
                    stream_names[which], (int)(SW_STD_BUFFER_BYTES / 1024));
    return 2;
}

/* Writes the strings and numbers from index `first` on, as one piece. */
static bool write_args(lua_State *L, sw_std_stream which, int first)
{
    int top = lua_gettop(L);
    luaL_Buffer b;
    for (int i = first; i <= top; i++) luaL_checklstring(L, i, NULL); /* raise before anything */
    luaL_buffinit(L, &b);
    for (int i = first; i <= top; i++) {
        lua_pushvalue(L, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    bool ok = sw_std_write(sw_proc_of(L), which, s, len);
    lua_pop(L, 1);
    return ok;
}

static int file_write(lua_State *L)
{
    sw_std_stream which = check_file(L, 1);
    return result(L, write_args(L, which, 2), which, 1);
}

static int file_flush(lua_State *L)
{
    sw_std_stream which = check_file(L, 1);
    return result(L, sw_std_flush(sw_proc_of(L), which), which, 1);
}

static int file_tostring(lua_State *L)
{
    lua_pushfstring(L, "file (%s)", stream_names[check_file(L, 1)]);
    return 1;
}

static void file_metatable(lua_State *L)
{
    static const luaL_Reg methods[] = {{"write", file_write}, {"flush", file_flush}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, file_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "io file");
    lua_setfield(L, -2, "__metatable");
}

/* io.write(...) and io.flush(): the stdout file, an upvalue. */
static int io_write(lua_State *L)
{
    bool ok = write_args(L, SW_STDOUT, 1);
    return result(L, ok, SW_STDOUT, lua_upvalueindex(1));
}

static int io_flush(lua_State *L)
{
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    return file_flush(L);
}

static void push_file(lua_State *L, sw_std_stream which)
{
    sw_std_stream *f = lua_newuserdata(L, sizeof *f);
    *f = which;
    sw_api_push_metatable(L, &FILE_MT, file_metatable);
    lua_setmetatable(L, -2);
}

int sw_open_io(lua_State *L)
{
    lua_createtable(L, 0, 4);
    push_file(L, SW_STDOUT);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "stdout");
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, io_write, 1);
    lua_setfield(L, -3, "write");
    lua_pushcclosure(L, io_flush, 1);
    lua_setfield(L, -2, "flush");
    push_file(L, SW_STDERR);
    lua_setfield(L, -2, "stderr");
    return 1;
}
