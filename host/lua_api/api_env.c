/* The `env` module (docs/lua-api.md): env.get(name) reads a variable that an env.variables
 * entry of the process's snapshot exposes (registry/env_vars.h), guarded by `env.get` on the
 * name before the lookup, so a denied process cannot learn which names are exposed. */
#include <lauxlib.h>

#include "api.h"
#include "env_vars.h"

static int env_get(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && !ctx->allowed(L, "env.get", name))
        return sw_push_denied(L, "env.get", name);
    const sw_env_exposed *v = ctx->registry ? sw_registry_env(ctx->registry, name) : NULL;
    const char *value = v ? sw_env_value(v) : NULL;
    if (value) {
        lua_pushstring(L, value);
        return 1;
    }
    lua_pushnil(L);
    if (!v)
        lua_pushfstring(L, "env.get: %s is not exposed (no env.variables entry lists it)", name);
    else
        lua_pushfstring(L, "env.get: %s is not set in the host environment and has no default",
                        name);
    return 2;
}

/* os.getenv(name): env.get's rules and guard, Lua's shape: the value, or nil (not exposed,
 * unset without default, or denied). */
static int os_getenv(lua_State *L)
{
    lua_settop(L, 1);
    env_get(L);
    lua_settop(L, 2);
    return 1;
}

/* Extends the vm's read-only os subset (argument 1, a proxy whose __index is the table) with
 * getenv; a bare table when there is none (the API docs check opens modules that way). */
int sw_open_os(lua_State *L)
{
    if (!lua_istable(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    } else if (lua_getmetatable(L, 1)) {
        lua_getfield(L, -1, "__index");
        lua_remove(L, -2);
    } else {
        lua_pushvalue(L, 1);
    }
    lua_pushcfunction(L, os_getenv);
    lua_setfield(L, -2, "getenv");
    lua_settop(L, lua_istable(L, 1) ? 1 : lua_gettop(L));
    return 1;
}

int sw_open_env(lua_State *L)
{
    static const luaL_Reg fns[] = {{"get", env_get}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
