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

int sw_open_env(lua_State *L)
{
    static const luaL_Reg fns[] = {{"get", env_get}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
