/* The `channel` module: channel.new, channel.select, over the runtime's channels
 * (runtime/channel.h), which the inbox and events are made of too. */
#include <lauxlib.h>

#include "api.h"
#include "channel.h"

int sw_open_channel(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"new", sw_chan_new_lua}, {"select", sw_chan_select_lua}, {NULL, NULL}};
    lua_createtable(L, 0, 2);
    luaL_register(L, NULL, fns);
    return 1;
}
