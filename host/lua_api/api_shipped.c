/* Loading the host's own Lua (lua/, compiled into the binary) into a process. */
#include <lauxlib.h>

#include "api.h"
#include "lua_chunk.h"

void sw_api_load_shipped(lua_State *L, const char *name)
{
    size_t len = 0;
    const unsigned char *bc = sw_lua_chunk(name, &len);
    if (!bc) luaL_error(L, "no lua/%s.lua in this build", name);
    if (luaL_loadbufferx(L, (const char *)bc, len, name, "b") != 0) lua_error(L);
}
