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
    const char *pid;             /* "host|0x0001"-style */
    const char *service;         /* the service id this process belongs to, or NULL */
    const sw_registry *registry; /* the snapshot the process reads with registry.get/find */
    sw_log *log;                 /* where logger writes */
    /* The host's own security check (docs/security.md) for a guarded call: true if the process may
     * do action on resource. NULL: nothing is guarded (a stand-in context in tests). */
    bool (*allowed)(lua_State *L, const char *action, const char *resource);
    /* The same decision without an audit event (docs/security.md "Audit"), for filtering what a
     * call shows (registry.find) where nothing is refused. NULL: use allowed. */
    bool (*visible)(lua_State *L, const char *action, const char *resource);
} sw_proc_ctx;

/* The context of the process owning L (any coroutine of it). Never NULL inside a process. */
const sw_proc_ctx *sw_proc_ctx_of(lua_State *L);

#endif
