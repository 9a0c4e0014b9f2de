/* Lua `supervisor` (docs/lua-api.md, docs/supervision.md "Supervisors in Lua"): written in Lua
 * (lua/supervisor.lua, shipped as bytecode), run as a task of the calling process. This opener
 * runs that chunk with the host modules it uses and these primitives, which only it sees:
 *  - exits(): a new unbounded channel for the EXITs of one supervisor's children;
 *  - spawn(id, exits, ...) -> pid, handle: process.spawn of a process.lua (guarded, same
 *    service, security context and worker as the caller), monitored under a host-call
 *    reference (SW_CALLS_KEY, mailbox.h) so its EXIT is offered to `exits` as
 *    {pid = pid, result = result} instead of becoming one of the caller's events; the child is
 *    owned by its handle: if the caller's state closes first (the caller ended, however), the
 *    child is killed;
 *  - cancel(handle), kill(handle): CANCEL or kill the handle's child while it runs. Not
 *    guarded (process.cancel and process.terminate are): the handle already owns the child,
 *    whose spawn was guarded, and only this chunk ever holds a handle;
 *  - traps_links(): whether the process traps links (an escalation is then a LINK_DOWN event);
 *  - seconds(v): a duration as the registry and `time` read it, in seconds; nil if not one.
 * Everything runs on the thread running the calling process. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"

typedef struct child {
    sw_runtime *rt;
    sw_workers *pool; /* the caller's: the child runs there too */
    uint64_t pid;     /* while it runs; 0 once its EXIT came */
} child;

static const char child_mt_key = 0;

/* __gc: collected only once out of the calls table (after the EXIT) or as the state closes.
 * Not while the host shuts down: its pool has stopped and what is left is freed unrun. */
static int child_gc(lua_State *L)
{
    child *c = lua_touserdata(L, 1);
    if (c->pid && !atomic_load(&c->pool->stopping)) sw_runtime_kill(c->rt, c->pid);
    c->pid = 0;
    return 0;
}

static void child_mt_init(lua_State *L)
{
    lua_pushcfunction(L, child_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

/* The callable under the child's monitor ref, from the mailbox: (result table or nil).
 * Upvalues: the child object, the exits channel, the child's pid string. */
static int child_exited(lua_State *L)
{
    child *c = lua_touserdata(L, lua_upvalueindex(1));
    c->pid = 0;
    lua_pushvalue(L, lua_upvalueindex(2)); /* sw_chan_offer wants a stack index */
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_setfield(L, -2, "pid");
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "result");
    sw_chan_offer(L, -2); /* unbounded: never dropped */
    return 0;
}

static int s_exits(lua_State *L)
{
    sw_chan_push_new(L, SW_CHAN_UNBOUNDED);
    return 1;
}

/* Registers the EXIT route of a child about to be spawned under ref: its callable goes into
 * the calls table before the spawn, so a raise after it could not leave the child unowned.
 * Leaves the child's handle on the stack. */
static child *route_exit(lua_State *L, sw_proc *p, uint64_t ref)
{
    child *c = lua_newuserdata(L, sizeof *c);
    memset(c, 0, sizeof *c);
    c->rt = p->rt;
    c->pool = p->worker->all;
    sw_api_push_metatable(L, &child_mt_key, child_mt_init);
    lua_setmetatable(L, -2);
    int obj = lua_gettop(L);
    sw_api_push_calls(L);
    lua_pushnumber(L, (lua_Number)ref);
    lua_pushvalue(L, obj);
    lua_pushvalue(L, 2);    /* the exits channel */
    lua_pushliteral(L, ""); /* the pid, set once known */
    lua_pushcclosure(L, child_exited, 3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    return c;
}

static void unroute_exit(lua_State *L, uint64_t ref)
{
    sw_api_push_calls(L);
    lua_pushnumber(L, (lua_Number)ref);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

static void set_routed_pid(lua_State *L, uint64_t ref, const char *pid)
{
    sw_api_push_calls(L);
    lua_pushnumber(L, (lua_Number)ref);
    lua_rawget(L, -2);
    lua_pushstring(L, pid);
    lua_setupvalue(L, -2, 3);
    lua_pop(L, 2);
}

/* spawn(id, exits, ...) -> pid, handle; or nil, err (the errors of process.spawn). */
static int s_spawn(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    const sw_entry *e = sw_api_spawn_entry(L, luaL_checkstring(L, 1));
    if (!e) return 2;
    char err[256];
    int nargs = lua_gettop(L) - 2;
    if (sw_msg_encode(L, 3, nargs, p->rt->max_message, &p->sendbuf, err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    uint64_t ref = sw_proc_new_ref(p);
    child *c = route_exit(L, p, ref);
    sw_spawn s = {.entry = e,
                  .registry = p->ctx.registry,
                  .service = p->service,
                  .args = p->sendbuf.data,
                  .args_len = p->sendbuf.len,
                  .worker = p->worker,
                  .monitor_by = p->id,
                  .monitor_ref = ref,
                  .parent = p,
                  .identity = p->identity}; /* children run as the supervisor does */
    c->pid = sw_proc_spawn(p->rt, &s, err, sizeof err);
    if (!c->pid) {
        unroute_exit(L, ref);
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    char pid[32];
    sw_pid_format(c->pid, pid, sizeof pid);
    set_routed_pid(L, ref, pid);
    lua_pushstring(L, pid);
    lua_insert(L, -2); /* pid, then the handle route_exit left on the stack */
    return 2;
}

/* cancel(handle): a CANCEL from the caller, as process.cancel(pid) without a reason. */
static int s_cancel(lua_State *L)
{
    child *c = sw_api_checkudata(L, 1, &child_mt_key, "child");
    sw_proc *p = sw_proc_of(L);
    sw_delivery *d = c->pid ? sw_delivery_new(SW_DLV_CANCEL, p->id, 0, NULL, NULL, 0) : NULL;
    /* false: it is gone (its EXIT is coming) or out of memory; the caller kills it then */
    lua_pushboolean(L, d && sw_runtime_deliver(p->rt, c->pid, d) == 0);
    return 1;
}

static int s_kill(lua_State *L)
{
    child *c = sw_api_checkudata(L, 1, &child_mt_key, "child");
    lua_pushboolean(L, c->pid && sw_runtime_kill(c->rt, c->pid) == 0);
    return 1;
}

static int s_traps_links(lua_State *L)
{
    lua_pushboolean(L, sw_proc_of(L)->trap_links);
    return 1;
}

static int s_seconds(lua_State *L)
{
    int64_t ns = sw_api_to_duration(L, 1);
    if (ns < 0) lua_pushnil(L);
    else lua_pushnumber(L, (lua_Number)ns / 1e9);
    return 1;
}

int sw_open_supervisor(lua_State *L)
{
    static const luaL_Reg prims[] = {{"exits", s_exits},
                                     {"spawn", s_spawn},
                                     {"cancel", s_cancel},
                                     {"kill", s_kill},
                                     {"traps_links", s_traps_links},
                                     {"seconds", s_seconds},
                                     {NULL, NULL}};
    /* What the chunk uses, captured now: a process may later overwrite its own globals. */
    static const char *const uses[] = {"process",   "channel", "time",         "logger", "errors",
                                       "coroutine", "math",    "string",       "table",  "type",
                                       "tostring",  "pairs",   "ipairs",       "pcall",  "error",
                                       "select",    "unpack",  "setmetatable", NULL};
    sw_api_load_shipped(L, "supervisor");
    lua_createtable(L, 0, 3);
    luaL_register(L, NULL, prims);
    lua_createtable(L, 0, 20);
    for (const char *const *u = uses; *u; u++) {
        lua_getglobal(L, *u);
        lua_setfield(L, -2, *u);
    }
    lua_call(L, 2, 1);
    return 1;
}
