/* What common Lua libraries expect of `os`, `debug` and `jit`, in safe subsets
 * (docs/lua-api.md "The sandbox"): each a lazily opened global, read-only.
 *   os:    clock, date, difftime, time (LuaJIT's own; no execute, exit, remove, rename, tmpname
 *          or setlocale; the host adds getenv, which goes through the env module's rules).
 *   debug: traceback (what xpcall handlers use), getinfo without the function or its lines,
 *          and getmetatable/setmetatable with the base library's protection: read-only
 *          facts, nothing that reaches another function's locals, upvalues or hooks.
 *   getfenv/setfenv: on the process's own Lua functions only (never a C or host function,
 *          never level 0: the thread's environment).
 *   jit:   version, version_num, os, arch and status(): facts, none of the switches that would
 *          turn the compiler on and escape preemption. */
#include "vm_internal.h"

#include <lauxlib.h>
#include <lualib.h>
#include <luajit.h>
#include <string.h>

#include "lua_chunk.h"

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
static void debug_extras(lua_State *L, int t);

static int open_subset(lua_State *L, const char *name, lua_CFunction open,
                       const char *const *allowed)
{
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    copy_fields(L, lua_gettop(L), allowed);
    if (open == luaopen_debug) debug_extras(L, lua_gettop(L));
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

/* debug.getinfo(level | f [, what]): LuaJIT's fields except func and activelines (the function
 * itself would hand out functions up the stack, the host's among them). */
static int dbg_getinfo(lua_State *L)
{
    lua_Debug ar;
    char opts[8] = {0};
    size_t k = 0;
    const char *what = luaL_optstring(L, 2, "flnSu");
    if (lua_isfunction(L, 1)) {
        opts[k++] = '>';
        lua_pushvalue(L, 1);
    } else if (lua_isnumber(L, 1)) {
        if (!lua_getstack(L, (int)lua_tointeger(L, 1), &ar)) return 0; /* nil: no such level */
    } else {
        return luaL_argerror(L, 1, "function or level expected");
    }
    for (; *what && k < sizeof opts - 1; what++)
        if (strchr("nSlu", *what) && !strchr(opts, *what)) opts[k++] = *what;
    if (!lua_getinfo(L, opts, &ar)) return luaL_argerror(L, 2, "invalid option");
    lua_createtable(L, 0, 9);
    if (strchr(opts, 'S')) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, -2, "source");
        lua_pushstring(L, ar.short_src);
        lua_setfield(L, -2, "short_src");
        lua_pushinteger(L, ar.linedefined);
        lua_setfield(L, -2, "linedefined");
        lua_pushinteger(L, ar.lastlinedefined);
        lua_setfield(L, -2, "lastlinedefined");
        lua_pushstring(L, ar.what);
        lua_setfield(L, -2, "what");
    }
    if (strchr(opts, 'l')) {
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, -2, "currentline");
    }
    if (strchr(opts, 'u')) {
        lua_pushinteger(L, ar.nups);
        lua_setfield(L, -2, "nups");
    }
    if (strchr(opts, 'n')) {
        lua_pushstring(L, ar.name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, ar.namewhat);
        lua_setfield(L, -2, "namewhat");
    }
    return 1;
}

int vm_compat_debug(lua_State *L)
{
    static const char *const allowed[] = {"traceback", NULL};
    return open_subset(L, "debug", luaopen_debug, allowed);
}

/* The extra debug functions, added to the table before it is made read-only. */
static void debug_extras(lua_State *L, int t)
{
    lua_pushcfunction(L, dbg_getinfo);
    lua_setfield(L, t, "getinfo");
    lua_getglobal(L, "getmetatable"); /* the base library's: protected metatables stay hidden */
    lua_setfield(L, t, "getmetatable");
    lua_getglobal(L, "setmetatable"); /* tables only, protected ones refused */
    lua_setfield(L, t, "setmetatable");
}

/* ---- getfenv / setfenv ---- */

/* Whether source names one of the host's own Lua chunks (the lua/ folder: "@lua/NAME.lua" with
 * debug info; "=[NAME]" or "NAME" stripped). */
static bool host_source(const char *source)
{
    char name[64];
    size_t n = strlen(source), len;
    if (strncmp(source, "@lua/", 5) == 0 && n > 9 && n - 9 < sizeof name &&
        strcmp(source + n - 4, ".lua") == 0) {
        memcpy(name, source + 5, n - 9);
        name[n - 9] = 0;
    } else if (strncmp(source, "=[", 2) == 0 && n > 3 && n - 3 < sizeof name &&
               source[n - 1] == ']') {
        memcpy(name, source + 2, n - 3);
        name[n - 3] = 0;
    } else if (n < sizeof name) {
        memcpy(name, source, n + 1);
    } else {
        return false;
    }
    return sw_lua_chunk(name, &len) != NULL;
}

/* Pushes the function argument 1 names (a function, or a level: 1 = the caller, default);
 * raises unless it is one of the process's own Lua functions. */
static void push_own_function(lua_State *L, const char *fname)
{
    lua_Debug ar;
    if (lua_isfunction(L, 1)) {
        lua_pushvalue(L, 1);
    } else {
        int level = (int)luaL_optinteger(L, 1, 1);
        if (level == 0)
            luaL_error(L, "%s: level 0 (the thread's environment) is not allowed", fname);
        if (level < 0) luaL_argerror(L, 1, "level must be non-negative");
        if (!lua_getstack(L, level, &ar)) luaL_argerror(L, 1, "invalid level");
        lua_getinfo(L, "f", &ar);
    }
    lua_pushvalue(L, -1);
    lua_getinfo(L, ">S", &ar);
    if (lua_iscfunction(L, -1) || host_source(ar.source))
        luaL_error(L, "%s: not allowed on a host function", fname);
}

static int compat_getfenv(lua_State *L)
{
    push_own_function(L, "getfenv");
    lua_getfenv(L, -1);
    return 1;
}

static int compat_setfenv(lua_State *L)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    push_own_function(L, "setfenv");
    lua_pushvalue(L, 2);
    lua_setfenv(L, -2);
    return 1; /* the function, as Lua's setfenv */
}

void vm_compat_base(lua_State *L)
{
    lua_pushcfunction(L, compat_getfenv);
    lua_setglobal(L, "getfenv");
    lua_pushcfunction(L, compat_setfenv);
    lua_setglobal(L, "setfenv");
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
