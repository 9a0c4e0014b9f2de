/* The host modules a process sees (docs/lua-api.md), installed lazily: a module's table is built on
 * first use of its global, then made read-only. Shared helpers of the module files. */
#ifndef STEWARD_API_H
#define STEWARD_API_H

#include <lua.h>
#include <stdint.h>

#include "channel.h"
#include "mailbox.h"
#include "proc_ctx.h"
#include "runtime.h"
#include "vm.h"

/* The lazily opened host modules and `require`, for sw_runtime_config.libs. */
extern const sw_vm_lib sw_api_libs[];
/* Hands the Lua modules and the guard to a runtime: cfg->libs and cfg->guard. */
void sw_api_use(sw_runtime_config *cfg);

/* nil, msg: a failed call's two results (return its value). */
int sw_api_fail(lua_State *L, const char *msg);
/* nil and the message formatted as lua_pushfstring formats it. */
int sw_api_failf(lua_State *L, const char *fmt, ...);

/* Metatables kept in the registry under a light-userdata key (the address of a static), so
 * checking a userdata's type costs no string interning. push_metatable creates it with init
 * on first use; toudata gives the full userdata at idx when its metatable is key's, else NULL
 * (raises nothing); checkudata raises a type error naming tname instead of returning NULL. */
void sw_api_push_metatable(lua_State *L, const void *key, void (*init)(lua_State *L));
void *sw_api_toudata(lua_State *L, int idx, const void *key);
void *sw_api_checkudata(lua_State *L, int idx, const void *key, const char *tname);

/* __newindex of read-only tables: raises "attempt to modify a read-only host module". */
int sw_api_readonly_newindex(lua_State *L);

/* Wraps the table on top of L in a read-only proxy (writes raise; the metatable is hidden). */
int sw_api_readonly(lua_State *L);

/* Module openers (each pushes a plain table; api.c makes it read-only). */
int sw_open_logger(lua_State *L);
int sw_open_errors(lua_State *L);
int sw_open_json(lua_State *L);
int sw_open_registry(lua_State *L);
int sw_open_process(lua_State *L);
int sw_open_channel(lua_State *L);
int sw_open_time(lua_State *L);
int sw_open_security(lua_State *L);
int sw_open_net(lua_State *L);
int sw_open_funcs(lua_State *L);
int sw_open_http(lua_State *L);
int sw_open_supervisor(lua_State *L);
int sw_open_service(lua_State *L);
int sw_open_env(lua_State *L);
int sw_open_uuid(lua_State *L);
int sw_open_io(lua_State *L);
/* The require function and the process's package table (api_require.c; not read-only). */
int sw_open_require(lua_State *L);
int sw_open_package(lua_State *L);
/* sw_runtime_config.test_main for `steward test`: the chunk on top becomes lua/test.lua's
 * runner around it (api_test.c). */
int sw_api_test_main(lua_State *L);
/* Adds os.getenv (env.get's rules) to the vm's os subset passed as argument 1 (api_env.c). */
int sw_open_os(lua_State *L);
int sw_open_fs(lua_State *L);
int sw_open_exec(lua_State *L);

/* The host path of the "volume_id:rel" path at idx (exec's cwd): 0 with out filled, or the
 * count of (nil, err) pushed (a bad path, no such volume). No guard is checked. */
int sw_api_fs_local_path(lua_State *L, int idx, char *out, size_t len);

/* The main_hook of an http.service's process (api_http_server.c; sw_runtime_http_service). */
int sw_http_server_main(lua_State *L);

/* The guard host calls use (sw_proc_ctx.allowed): whether the calling process may do action on
 * resource under the runtime's current policy set. A process whose service has no
 * lifecycle.security is not guarded. */
bool sw_security_allowed(lua_State *L, const char *action, const char *resource);
/* The same decision without an audit event: for filtering what a call shows (registry.find
 * leaves out what the caller may not read), where nothing was refused. */
bool sw_security_visible(lua_State *L, const char *action, const char *resource);

/* time.now() and time.sleep(d), for other modules' Lua that waits (lua/io.lua). */
int sw_api_now(lua_State *L);
int sw_api_sleep(lua_State *L);

/* The duration at idx (a "250ms"-style string or seconds) in ns, or -1 if it is not one. */
int64_t sw_api_to_duration(lua_State *L, int idx);
/* A duration argument: "250ms"-style string or seconds; raises on anything else. */
int64_t sw_api_check_duration(lua_State *L, int idx);
/* Pushes the function of lua/<name>.lua (the host's own Lua, shipped as bytecode); raises if
 * this build has no such chunk. */
void sw_api_load_shipped(lua_State *L, const char *name);

/* The guarded call's error: pushes nil, "permission denied: <action> on <resource>"; returns 2. */
int sw_push_denied(lua_State *L, const char *action, const char *resource);

/* The process.lua entry a process may spawn by id (relative: in the caller's namespace),
 * guarded by process.spawn before the lookup. NULL with nil, err pushed (docs/lua-api.md
 * "process.spawn"). */
const sw_entry *sw_api_spawn_entry(lua_State *L, const char *id);

/* Pushes the process's host-call table (SW_CALLS_KEY, mailbox.h), made on first use: a
 * callable put under a monitor ref there gets that process's EXIT instead of an event. */
void sw_api_push_calls(lua_State *L);

/* A pid or registered name -> id; 0 if no such process. */
uint64_t sw_api_resolve(lua_State *L, const char *dest);

#endif
