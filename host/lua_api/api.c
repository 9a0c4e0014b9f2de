/* Installing the host modules in a process: each global is opened lazily by the vm on first
 * use (idle processes stay small), wrapped read-only. `require` and `package` are in
 * api_require.c. */
#include "api.h"

#include <stdarg.h>

#include <lauxlib.h>
#include <string.h>

#include "api_identity.h"
#include "kinds.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"
#include "task.h"
#include "vm.h"

int sw_api_fail(lua_State *L, const char *msg)
{
    lua_pushnil(L);
    lua_pushstring(L, msg);
    return 2;
}

int sw_api_failf(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lua_pushnil(L);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    return 2;
}

int sw_api_readonly_newindex(lua_State *L)
{
    return luaL_error(L, "attempt to modify a read-only host module (field '%s')",
                      lua_tostring(L, 2));
}

void sw_api_push_metatable(lua_State *L, const void *key, void (*init)(lua_State *L))
{
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_newtable(L);
    init(L);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

void *sw_api_toudata(lua_State *L, int idx, const void *key)
{
    if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return NULL;
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? lua_touserdata(L, idx) : NULL;
}

void *sw_api_checkudata(lua_State *L, int idx, const void *key, const char *tname)
{
    void *p = sw_api_toudata(L, idx, key);
    if (!p) luaL_typerror(L, idx, tname);
    return p;
}

int sw_api_readonly(lua_State *L)
{
    sw_vm_readonly_proxy(L, sw_api_readonly_newindex);
    return 1;
}

#define OPENER(name, fn)                 \
    static int open_##name(lua_State *L) \
    {                                    \
        fn(L);                           \
        return sw_api_readonly(L);       \
    }

OPENER(process, sw_open_process)
OPENER(channel, sw_open_channel)
OPENER(time, sw_open_time)
OPENER(logger, sw_open_logger)
OPENER(errors, sw_open_errors)
OPENER(json, sw_open_json)
OPENER(registry, sw_open_registry)
OPENER(security, sw_open_security)
OPENER(net, sw_open_net)
OPENER(funcs, sw_open_funcs)
OPENER(http, sw_open_http)
OPENER(supervisor, sw_open_supervisor)
OPENER(service, sw_open_service)
OPENER(env, sw_open_env)
OPENER(uuid, sw_open_uuid)
OPENER(io, sw_open_io)
OPENER(fs, sw_open_fs)
OPENER(exec, sw_open_exec)

/* The sandbox's own coroutine table, plus spawn. */
static int open_coroutine(lua_State *L)
{
    lua_pushcfunction(L, sw_task_spawn_lua);
    lua_setfield(L, 1, "spawn");
    lua_settop(L, 1);
    return sw_api_readonly(L);
}

const sw_vm_lib sw_api_libs[] = {{"process", open_process},
                                 {"channel", open_channel},
                                 {"time", open_time},
                                 {"logger", open_logger},
                                 {"errors", open_errors},
                                 {"json", open_json},
                                 {"registry", open_registry},
                                 {"security", open_security},
                                 {"net", open_net},
                                 {"funcs", open_funcs},
                                 {"http", open_http},
                                 {"coroutine", open_coroutine},
                                 {"require", sw_open_require},
                                 {"supervisor", open_supervisor},
                                 {"service", open_service},
                                 {"env", open_env},
                                 {"uuid", open_uuid},
                                 {"io", open_io},
                                 {"package", sw_open_package},
                                 {"os", sw_open_os},
                                 {"fs", open_fs},
                                 {"exec", open_exec},
                                 {NULL, NULL}};

void sw_api_use(sw_runtime_config *cfg)
{
    cfg->libs = sw_api_libs;
    cfg->guard = sw_security_allowed;
    cfg->http_server_main = sw_http_server_main;
    cfg->visible = sw_security_visible;
    sw_msg_set_ext(&sw_api_identity_ext); /* actors and scopes cross in messages as copies */
}
