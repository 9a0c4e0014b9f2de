/* Lua `errors` (docs/lua-api.md): written in Lua (lua/errors.lua, shipped as bytecode); this
 * opener runs that chunk with the base functions it needs and returns its table. */
#include <lauxlib.h>

#include "api.h"

int sw_open_errors(lua_State *L)
{
    static const char *const uses[] = {"type",     "next",   "rawget", "rawset", "setmetatable",
                                       "tostring", "select", "error",  NULL};
    int n = 1;
    sw_api_load_shipped(L, "errors");
    luaL_newmetatable(L, "steward.error"); /* one per state */
    for (const char *const *u = uses; *u; u++, n++) lua_getglobal(L, *u);
    lua_call(L, n, 1);
    return 1;
}
