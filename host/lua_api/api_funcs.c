/* The `funcs` module: calls a function.lua entry in a fresh process of its own, per call.
 * funcs.call blocks the calling task until the function ends and returns its values (or
 * nil, err); funcs.async returns a channel that receives {values = {...}, error = err} once.
 * The function's process is spawned monitored by the caller under a new reference, and a
 * call object (userdata) is put under that reference in the caller's SW_CALLS_KEY table: the
 * EXIT is handed to it (mailbox.c) instead of becoming an event. A call object owns its
 * process: if the caller's state closes (the caller ended) before the EXIT, it kills it.
 * Everything runs on the thread running the calling process. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "api_identity.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"
#include "task.h"

typedef struct fcall {
    sw_task_wait wait; /* funcs.call: the blocked task's; first, for the cast back */
    sw_runtime *rt;
    sw_workers *pool; /* the caller's (the function runs there too) */
    uint64_t child;   /* the function's pid while it runs; 0 once ended */
    sw_task *task;    /* funcs.call: the blocked task; NULL once woken or gone */
    int chan_ref;     /* funcs.async: the channel (registry ref), else LUA_NOREF */
} fcall;

static const char fcall_mt_key = 0;

/* Kills the function if it may still run. Not while the host shuts down: its pool has
 * stopped and every process left is freed without running again. */
static void fcall_kill(fcall *c)
{
    if (c->child && !atomic_load(&c->pool->stopping)) sw_runtime_kill(c->rt, c->child);
    c->child = 0;
}

/* The blocked task is freed (its process ends): the call has nobody to answer. */
static void fcall_cancel(sw_task_wait *w)
{
    fcall *c = (fcall *)w;
    c->task = NULL;
    fcall_kill(c);
}

/* __gc: collected only once out of the calls table, after the EXIT or as the state closes. */
static int fcall_gc(lua_State *L)
{
    fcall_kill(lua_touserdata(L, 1));
    return 0;
}

/* Pushes err without the host's traceback (a raised error's text has one). */
static void push_error(lua_State *L, int idx)
{
    size_t len;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    const char *tb = s ? strstr(s, "\nstack traceback:") : NULL;
    if (tb) lua_pushlstring(L, s, (size_t)(tb - s));
    else lua_pushvalue(L, idx);
}

/* The result table at idx as funcs.call returns it: its values, or nil, err. */
static int push_outcome(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) {
        lua_pushnil(L);
        lua_pushliteral(L, "the function ended without a result");
        return 2;
    }
    lua_getfield(L, idx, "error");
    if (!lua_isnil(L, -1)) {
        lua_pushnil(L);
        push_error(L, -2);
        lua_remove(L, -3);
        return 2;
    }
    lua_pop(L, 1);
    lua_getfield(L, idx, "values");
    int vals = lua_gettop(L);
    lua_getfield(L, vals, "n");
    int n = lua_istable(L, vals) ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if (n < 0 || !lua_checkstack(L, n + LUA_MINSTACK)) {
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_pushliteral(L, "too many results");
        return 2;
    }
    for (int i = 1; i <= n; i++) lua_rawgeti(L, vals, i);
    lua_remove(L, vals);
    return n;
}

/* The result table at idx reshaped in place for funcs.async: {values = {n = N, ...}, error}. */
static void shape_async(lua_State *L, int idx)
{
    lua_getfield(L, idx, "error");
    push_error(L, -1);
    lua_setfield(L, idx, "error");
    lua_pop(L, 1);
    lua_getfield(L, idx, "values");
    bool none = !lua_istable(L, -1);
    lua_pop(L, 1);
    if (none) {
        lua_createtable(L, 0, 1);
        lua_pushinteger(L, 0);
        lua_setfield(L, -2, "n");
        lua_setfield(L, idx, "values");
    }
    lua_pushnil(L);
    lua_setfield(L, idx, "value");
}

/* __call, from the mailbox: (call object, result table or nil) as the function ended. */
static int fcall_done(lua_State *L)
{
    fcall *c = lua_touserdata(L, 1);
    c->child = 0;
    if (c->task) {
        sw_task *t = c->task;
        c->task = NULL;
        int n = push_outcome(L, 2);
        sw_task_wake(t, L, n);
    } else if (c->chan_ref != LUA_NOREF) {
        if (!lua_istable(L, 2)) {
            lua_settop(L, 1);
            lua_createtable(L, 0, 2);
            lua_pushliteral(L, "the function ended without a result");
            lua_setfield(L, 2, "error");
        }
        shape_async(L, 2);
        lua_rawgeti(L, LUA_REGISTRYINDEX, c->chan_ref);
        lua_pushvalue(L, 2);
        sw_chan_offer(L, -2);
        luaL_unref(L, LUA_REGISTRYINDEX, c->chan_ref);
        c->chan_ref = LUA_NOREF;
    }
    return 0;
}

static void fcall_mt_init(lua_State *L)
{
    lua_pushcfunction(L, fcall_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, fcall_done);
    lua_setfield(L, -2, "__call");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

void sw_api_push_calls(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, SW_CALLS_KEY);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, SW_CALLS_KEY);
}

/* The function entry of the id at 1 (relative: in the caller's namespace), guarded before the
 * lookup so a denied caller cannot learn which ids exist. NULL with nil, err pushed. */
static const sw_entry *function_entry(lua_State *L, sw_proc *p)
{
    const char *id = luaL_checkstring(L, 1);
    char full[256];
    if (!strchr(id, ':')) snprintf(full, sizeof full, "%s:%s", p->entry->ns, id), id = full;
    if (p->ctx.allowed && !p->ctx.allowed(L, "funcs.call", id)) {
        sw_push_denied(L, "funcs.call", id);
        return NULL;
    }
    const sw_entry *e = sw_registry_get(p->ctx.registry, id);
    if (!e || e->kind != SW_KIND_FUNCTION_LUA) {
        lua_pushnil(L);
        lua_pushfstring(L, "no function.lua %s", id);
        return NULL;
    }
    return e;
}

/* Starts the function with the arguments 2..top (copied as a message is) in the caller's
 * service and worker, as identity (NULL: the caller's security context). Pushes its call
 * object, registered; or nil, err. */
static fcall *start(lua_State *L, sw_sec_identity *identity)
{
    sw_proc *p = sw_proc_of(L);
    int nargs = lua_gettop(L) - 1;
    const sw_entry *e = function_entry(L, p);
    if (!e) return NULL;
    char err[256];
    if (sw_msg_encode(L, 2, nargs, p->rt->max_message, &p->sendbuf, err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return NULL;
    }
    fcall *c = lua_newuserdata(L, sizeof *c); /* before the spawn: a failure here raises */
    memset(c, 0, sizeof *c);
    c->chan_ref = LUA_NOREF;
    sw_api_push_metatable(L, &fcall_mt_key, fcall_mt_init);
    lua_setmetatable(L, -2);
    sw_api_push_calls(L);
    uint64_t ref = sw_proc_new_ref(p);
    sw_spawn s = {.entry = e,
                  .registry = p->ctx.registry,
                  .service = p->service,
                  .args = p->sendbuf.data,
                  .args_len = p->sendbuf.len,
                  .worker = p->worker,
                  .monitor_by = p->id,
                  .monitor_ref = ref,
                  .identity = identity ? identity : p->identity};
    lua_pushnumber(L, (lua_Number)ref);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3); /* registered first: a raise after the spawn would leave it unowned */
    c->rt = p->rt;
    c->pool = p->worker->all;
    c->child = sw_proc_spawn(p->rt, &s, err, sizeof err);
    if (!c->child) {
        lua_pushnumber(L, (lua_Number)ref);
        lua_pushnil(L);
        lua_rawset(L, -3);
        lua_pushnil(L);
        lua_pushstring(L, err);
        return NULL;
    }
    lua_pop(L, 1);
    return c;
}

/* funcs.call(id, ...): check, arm (spawn), register the cleanup (the wait's cancel), yield,
 * and resume with what fcall_done hands over. */
int sw_api_funcs_call_as(lua_State *L, sw_sec_identity *identity)
{
    sw_task *t = sw_task_current(L);
    if (!t || !lua_isyieldable(L)) return sw_task_block(L, NULL); /* raises "cannot block here" */
    fcall *c = start(L, identity);
    if (!c) return 2;
    c->task = t;
    c->wait.cancel = fcall_cancel;
    return sw_task_block(L, &c->wait);
}

static int f_call(lua_State *L) { return sw_api_funcs_call_as(L, NULL); }

/* funcs.async(id, ...): a channel (buffered, one slot) that receives the outcome once. */
static int f_async(lua_State *L)
{
    fcall *c = start(L, NULL);
    if (!c) return 2;
    sw_chan_push_new(L, 1);
    lua_pushvalue(L, -1);
    c->chan_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

int sw_open_funcs(lua_State *L)
{
    static const luaL_Reg fns[] = {{"call", f_call}, {"async", f_async}, {NULL, NULL}};
    lua_createtable(L, 0, 2);
    luaL_register(L, NULL, fns);
    return 1;
}
