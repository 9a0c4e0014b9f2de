/* `steward test`'s runner around a test.lua chunk (lua/test.lua; docs/lua-api.md
 * "steward test"), handed to the runtime as sw_runtime_config.test_main by cmd_test.c. */
#include "api.h"

int sw_api_test_main(lua_State *L)
{
    sw_api_load_shipped(L, "test");
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}
