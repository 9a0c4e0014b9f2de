/* Installing the host modules in a process: each global is opened lazily by the vm on first
 * use (idle processes stay small), wrapped read-only. `require` returns host modules and the
 * process's imports (library.lua entries, run once per process; a library's own imports are
 * visible while its chunk runs). */
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

void *sw_api_checkudata(lua_State *L, int idx, const void *key, const char *tname)
{
    void *p = lua_touserdata(L, idx);
    if (p && lua_getmetatable(L, idx)) {
        lua_pushlightuserdata(L, (void *)key);
        lua_rawget(L, LUA_REGISTRYINDEX);
        int same = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (same) return p;
    }
    luaL_typerror(L, idx, tname);
    return NULL;
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

/* ---- require ---- */

/* The imports visible now: those of the library whose chunk is running, else the process's. */
static const sw_imports *current_imports(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "steward.import_scope");
    const sw_imports *imps = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return imps ? imps : &sw_proc_of(L)->entry->as.process_lua.imports;
}

static const sw_entry *find_import(const sw_imports *imps, const char *alias)
{
    for (size_t i = 0; i < imps->n; i++)
        if (strcmp(imps->v[i].alias, alias) == 0) return imps->v[i].library.target;
    return NULL;
}

static int load_library(lua_State *L, const sw_entry *lib)
{
    char err[512];
    size_t len;
    const unsigned char *bc = sw_runtime_code(sw_proc_of(L)->rt, lib, &len, err, sizeof err);
    if (!bc || sw_vm_load_compiled(sw_vm_of(L), lib->id, bc, len, err, sizeof err) != 0)
        return luaL_error(L, "require: %s", err);
    lua_State *main = sw_vm_lua(sw_vm_of(L));
    lua_xmove(main, L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "steward.import_scope");
    lua_pushlightuserdata(L, (void *)&lib->as.library_lua.imports);
    lua_setfield(L, LUA_REGISTRYINDEX, "steward.import_scope");
    lua_insert(L, -2);
    int rc = lua_pcall(L, 0, 1, 0);
    lua_pushvalue(L, -2); /* restore the previous scope whatever happened */
    lua_setfield(L, LUA_REGISTRYINDEX, "steward.import_scope");
    lua_remove(L, -2);
    if (rc != 0) return lua_error(L);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1); /* as Lua's require: a library that returns nothing loads as true */
    }
    return 1;
}

static int api_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    for (const char *const *m = sw_host_module_names; *m;
         m++) { /* the registry's list: one source */
        if (strcmp(*m, name) == 0) {
            lua_getglobal(L, name);
            return 1;
        }
    }
    const sw_entry *lib = find_import(current_imports(L), name);
    if (!lib) return luaL_error(L, "module '%s' not found: no such host module or import", name);
    lua_getfield(L, LUA_REGISTRYINDEX, "steward.loaded");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "steward.loaded");
    }
    lua_getfield(L, -1, lib->id);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    load_library(L, lib);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, lib->id);
    return 1;
}

static int open_require(lua_State *L)
{
    lua_pushcfunction(L, api_require);
    return 1;
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
                                 {"require", open_require},
                                 {"supervisor", open_supervisor},
                                 {"service", open_service},
                                 {"env", open_env},
                                 {"uuid", open_uuid},
                                 {"io", open_io},
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
