/* What common Lua libraries expect of `os`, `debug` and `jit`, in safe subsets
 * (docs/lua-api.md "The sandbox"): each a lazily opened global, read-only.
 *   os:    clock, date, difftime, time (LuaJIT's own; no execute, exit, remove, rename, tmpname,
 *          getenv or setlocale: os.getenv goes through the env module's rules).
 *   debug: traceback only (what xpcall handlers use; it reads, never changes, a stack).
 *   jit:   version, version_num, os, arch and status(): facts, none of the switches that would
 *          turn the compiler on and escape preemption. */
#include "vm_internal.h"

#include <lauxlib.h>
#include <lualib.h>
#include <luajit.h>
#include <string.h>

static const char *const os_allowed[] = {"clock", "date", "difftime", "time", NULL};

/* Moves the fields named in names from the table at src into a new table, pushed. */
static void copy_fields(lua_State *L, int src, const char *const *names)
{
    lua_createtable(L, 0, 4);
    for (; *names; names++) {
        lua_getfield(L, src, *names);
        lua_setfield(L, -2, *names);
    }
}

static int refuse(lua_State *L)
{
    return luaL_error(L, "attempt to modify a read-only library (field '%s')", lua_tostring(L, 2));
}

/* The table at the top, as a read-only proxy in its place. */
static int readonly(lua_State *L)
{
    sw_vm_readonly_proxy(L, refuse);
    return 1;
}

/* Library `name` opened in this state (LuaJIT's own functions), its allowed fields copied
 * into a read-only table, pushed; the library itself is left nowhere (not in _G, not in
 * _LOADED), so only the copies are reachable. */
static int open_subset(lua_State *L, const char *name, lua_CFunction open,
                       const char *const *allowed)
{
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    copy_fields(L, lua_gettop(L), allowed);
    lua_replace(L, -2);
    lua_pushnil(L);
    lua_setglobal(L, name);
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    lua_pushnil(L);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    return readonly(L);
}

int vm_compat_os(lua_State *L) { return open_subset(L, "os", luaopen_os, os_allowed); }

int vm_compat_debug(lua_State *L)
{
    static const char *const allowed[] = {"traceback", NULL};
    return open_subset(L, "debug", luaopen_debug, allowed);
}

/* jit.status(): false while the JIT is off for this process (the default, for preemption),
 * true for a `jit: true` process, as LuaJIT's first result. */
static int jit_status(lua_State *L)
{
    lua_pushboolean(L, sw_vm_of(L)->jit != 0);
    return 1;
}

int vm_compat_jit(lua_State *L)
{
    lua_createtable(L, 0, 5);
    lua_pushliteral(L, LUAJIT_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushinteger(L, LUAJIT_VERSION_NUM);
    lua_setfield(L, -2, "version_num");
    lua_pushliteral(L, "Linux");
    lua_setfield(L, -2, "os");
#if defined(__x86_64__)
    lua_pushliteral(L, "x64");
#elif defined(__aarch64__)
    lua_pushliteral(L, "arm64");
#else
    lua_pushliteral(L, "other");
#endif
    lua_setfield(L, -2, "arch");
    lua_pushcfunction(L, jit_status);
    lua_setfield(L, -2, "status");
    return readonly(L);
}
