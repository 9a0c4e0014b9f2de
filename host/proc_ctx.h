/* What host API modules may read about the process that calls them. The runtime fills one per
 * process before its code runs and never changes it while the process lives (a reload swaps
 * `registry` only between two runs of the process's code, under the runtime's rules). */
#ifndef STEWARD_PROC_CTX_H
#define STEWARD_PROC_CTX_H

#include <lua.h>
#include <stdbool.h>

#include "log.h"
#include "registry.h"

typedef struct sw_proc_ctx {
    const char *pid;                /* "host|0x0001"-style */
    const char *service;            /* the service id this process belongs to, or NULL */
    const sw_registry *registry;    /* the snapshot the process reads with registry.get/find */
    sw_log *log;                    /* where logger writes */
    /* The host's own security check (DESIGN §6) for a guarded call: true if the process may
     * do action on resource. NULL: nothing is guarded (a stand-in context in tests). */
    bool (*allowed)(lua_State *L, const char *action, const char *resource);
} sw_proc_ctx;

/* The context of the process owning L (any coroutine of it). Never NULL inside a process. */
const sw_proc_ctx *sw_proc_ctx_of(lua_State *L);

/* Each host module's opener pushes a plain table of its functions; the runtime makes it
 * read-only when it installs it. */
int sw_open_logger(lua_State *L);
int sw_open_errors(lua_State *L);
int sw_open_json(lua_State *L);
int sw_open_registry(lua_State *L);

/* The guarded call's error: pushes nil, "permission denied: <action> on <resource>"; returns 2. */
int sw_push_denied(lua_State *L, const char *action, const char *resource);

/* Pushes the Lua value of a YAML node (nil for null or NULL); used for service input too. */
void sw_push_node(lua_State *L, const sw_node *n);

#endif
