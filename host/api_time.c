/* The `time` module: now, sleep, after, ticker. A timer lives on the libuv loop of the worker
 * running the process when it is set; when it fires it becomes a TIMER delivery, so the
 * process may have moved to another worker meanwhile. A process that ends leaves its timers to
 * fire into nothing and free themselves; ticker:stop() stops one at its next firing. */
#include <lauxlib.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "api.h"
#include "proc.h"
#include "runtime.h"
#include "task.h"
#include "units.h"

#define TICKER_MT "steward.ticker"

typedef struct sw_timer {
    uv_timer_t handle;           /* first: uv callbacks get the handle pointer */
    sw_runtime *rt;
    uint64_t pid, id;
    bool repeat;
    atomic_bool stopped;
} sw_timer;

double sw_time_now(void) { return (double)uv_hrtime() / 1e9; }

int64_t sw_api_check_duration(lua_State *L, int idx)
{
    int64_t ns = -1;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        if (sw_duration_from_seconds(lua_tonumber(L, idx), &ns) != 0) ns = -1;
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        if (sw_parse_duration(lua_tostring(L, idx), &ns) != 0) ns = -1;
    }
    if (ns < 0) luaL_argerror(L, idx, "expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)");
    return ns;
}

static void timer_closed(uv_handle_t *h) { free(h); }

static void timer_fired(uv_timer_t *h)
{
    sw_timer *t = (sw_timer *)h;
    sw_delivery *d = atomic_load(&t->stopped) ? NULL : sw_delivery_new(SW_DLV_TIMER, 0, t->id, NULL, NULL, 0);
    if (d) d->failed = t->repeat; /* tells the process to keep the timer's entry */
    bool alive = d && sw_runtime_deliver(t->rt, t->pid, d) == 0;
    if (!alive || !t->repeat) {
        uv_timer_stop(h);
        uv_close((uv_handle_t *)h, timer_closed);
    }
}

/* Arms a timer for the calling process on its worker's loop; `target` (at the top of L: a
 * task id or a channel) is what the firing wakes. Returns the timer. */
static sw_timer *arm(lua_State *L, int64_t ns, bool repeat)
{
    sw_proc *p = sw_proc_of(L);
    sw_worker *w = sw_worker_current();
    if (!w) luaL_error(L, "timers need a worker thread");
    sw_timer *t = calloc(1, sizeof *t);
    if (!t) luaL_error(L, "out of memory");
    t->rt = p->rt;
    t->pid = p->id;
    t->id = sw_proc_new_ref(p);
    t->repeat = repeat;
    atomic_init(&t->stopped, false);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->timers_ref);
    lua_pushnumber(L, (lua_Number)t->id);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 2); /* timers table and target */
    /* libuv times from the loop's cached clock: whole ms, read at the last uv_run (a busy
     * worker polls its loop only every few slices) and maybe from a coarse clock. Refresh it
     * and add how far it lags time.now()'s clock, so a timer never fires early. */
    uv_update_time(&w->loop);
    uint64_t hr = uv_hrtime(), cached = uv_now(&w->loop) * 1000000;
    uint64_t lag = hr > cached ? hr - cached : 0;
    uint64_t ms = (uint64_t)((ns + 999999) / 1000000);
    uint64_t first = (uint64_t)(((uint64_t)ns + lag + 999999) / 1000000);
    uv_timer_init(&w->loop, &t->handle);
    uv_timer_start(&t->handle, timer_fired, first, repeat ? (ms ? ms : 1) : 0);
    return t;
}

static int t_now(lua_State *L)
{
    lua_pushnumber(L, sw_time_now());
    return 1;
}

static int t_sleep(lua_State *L)
{
    int64_t ns = sw_api_check_duration(L, 1);
    sw_task *t = sw_task_current(L);
    if (!t) return luaL_error(L, "time.sleep outside a task");
    lua_pushnumber(L, (lua_Number)sw_task_id(t));
    arm(L, ns, false);
    return sw_task_block(L, NULL);
}

static int t_after(lua_State *L)
{
    int64_t ns = sw_api_check_duration(L, 1);
    sw_chan_push_new(L, 1);
    lua_pushvalue(L, -1);
    arm(L, ns, false);
    return 1;
}

static int ticker_channel(lua_State *L)
{
    luaL_checkudata(L, 1, TICKER_MT);
    lua_getfenv(L, 1);
    lua_rawgeti(L, -1, 1);
    return 1;
}

static int ticker_stop(lua_State *L)
{
    sw_timer **t = luaL_checkudata(L, 1, TICKER_MT);
    if (*t) {
        atomic_store(&(*t)->stopped, true); /* the loop thread closes it at its next firing */
        sw_proc *p = sw_proc_of(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, p->timers_ref);
        lua_pushnumber(L, (lua_Number)(*t)->id);
        lua_pushnil(L);
        lua_rawset(L, -3);
        *t = NULL;
    }
    return 0;
}

static int t_ticker(lua_State *L)
{
    int64_t ns = sw_api_check_duration(L, 1);
    if (ns == 0) return luaL_argerror(L, 1, "a ticker needs a period above zero");
    sw_timer **ud = lua_newuserdata(L, sizeof *ud);
    *ud = NULL;
    if (luaL_newmetatable(L, TICKER_MT)) {
        static const luaL_Reg methods[] = {{"channel", ticker_channel}, {"stop", ticker_stop}, {NULL, NULL}};
        lua_newtable(L);
        luaL_register(L, NULL, methods);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "ticker");
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    lua_createtable(L, 1, 0);
    sw_chan_push_new(L, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, 1);
    lua_insert(L, -2);
    lua_setfenv(L, -3); /* the ticker's env holds its channel */
    *ud = arm(L, ns, true); /* target: the channel */
    return 1;
}

int sw_open_time(lua_State *L)
{
    static const luaL_Reg fns[] = {{"now", t_now}, {"sleep", t_sleep}, {"after", t_after}, {"ticker", t_ticker}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
