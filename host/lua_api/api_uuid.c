/* The `uuid` module (docs/lua-api.md): uuid.v4() and uuid.v7() as lowercase text, from the OS's
 * random source (base/uuid.h). */
#include <lauxlib.h>

#include "api.h"
#include "uuid.h"

static int push_uuid(lua_State *L, int (*make)(uint8_t out[16]), const char *name)
{
    uint8_t u[16];
    if (make(u) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: the OS random source cannot be read", name);
        return 2;
    }
    char text[SW_UUID_TEXT];
    sw_uuid_text(u, text);
    lua_pushlstring(L, text, SW_UUID_TEXT - 1);
    return 1;
}

static int uuid_v4(lua_State *L) { return push_uuid(L, sw_uuid_v4, "uuid.v4"); }
static int uuid_v7(lua_State *L) { return push_uuid(L, sw_uuid_v7, "uuid.v7"); }

int sw_open_uuid(lua_State *L)
{
    static const luaL_Reg fns[] = {{"v4", uuid_v4}, {"v7", uuid_v7}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
