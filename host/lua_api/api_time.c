/* The `time` module: now, sleep, after, ticker, on the runtime's process timers (timer.h):
 * this file registers what each firing wakes. ticker:stop() stops one at its next firing.
 * The wall clock and its text (unix, format, parse: base/timefmt.h) and parse_duration. */
#include <lauxlib.h>
#include <stdlib.h>

#include "api.h"
#include "proc.h"
#include "runtime.h"
#include "task.h"
#include "timefmt.h"
#include "timer.h"
#include "units.h"

#define TICKER_MT "steward.ticker"

int64_t sw_api_to_duration(lua_State *L, int idx)
{
    int64_t ns = -1;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        if (sw_duration_from_seconds(lua_tonumber(L, idx), &ns) != 0) ns = -1;
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        if (sw_parse_duration(lua_tostring(L, idx), &ns) != 0) ns = -1;
    }
    return ns;
}

int64_t sw_api_check_duration(lua_State *L, int idx)
{
    int64_t ns = sw_api_to_duration(L, idx);
    if (ns < 0)
        luaL_argerror(L, idx, "expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)");
    return ns;
}

/* Arms a timer for the calling process; `target` (at the top of L: a task id or a channel)
 * is what its firings wake (timers table, read by the mailbox). Returns the timer. */
static sw_timer *arm(lua_State *L, int64_t ns, bool repeat)
{
    sw_proc *p = sw_proc_of(L);
    sw_timer *t = sw_timer_start(p, ns, repeat);
    if (!t) luaL_error(L, sw_worker_current() ? "out of memory" : "timers need a worker thread");
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->timers_ref);
    lua_pushnumber(L, (lua_Number)sw_timer_id(t));
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 2); /* timers table and target */
    return t;
}

int sw_api_now(lua_State *L)
{
    lua_pushnumber(L, sw_time_now());
    return 1;
}

int sw_api_sleep(lua_State *L)
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
        sw_proc *p = sw_proc_of(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, p->timers_ref);
        lua_pushnumber(L, (lua_Number)sw_timer_id(*t));
        sw_timer_stop(*t); /* the loop thread closes it at its next firing */
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
        static const luaL_Reg methods[] = {
            {"channel", ticker_channel}, {"stop", ticker_stop}, {NULL, NULL}};
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
    lua_setfenv(L, -3);     /* the ticker's env holds its channel */
    *ud = arm(L, ns, true); /* target: the channel */
    return 1;
}

/* ---- the wall clock ---- */

static int t_unix(lua_State *L)
{
    lua_pushnumber(L, sw_wall_now());
    return 1;
}

static int t_format(lua_State *L)
{
    double t = luaL_checknumber(L, 1);
    const char *fmt = luaL_optstring(L, 2, "rfc3339");
    char out[SW_TIMEFMT_MAX_OUT], err[160];
    int rc = sw_time_format(t, fmt, out, err, sizeof err);
    if (rc != 0) return luaL_argerror(L, rc == -1 ? 1 : 2, err);
    lua_pushstring(L, out);
    return 1;
}

static int t_parse(lua_State *L)
{
    const char *s = luaL_checkstring(L, 1);
    const char *fmt = luaL_optstring(L, 2, "rfc3339");
    double t;
    char err[256];
    int rc = sw_time_parse(s, fmt, &t, err, sizeof err);
    if (rc == -2) return luaL_argerror(L, 2, err);
    if (rc != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "time.parse: %s", err);
        return 2;
    }
    lua_pushnumber(L, t);
    return 1;
}

static int t_parse_duration(lua_State *L)
{
    const char *s = luaL_checkstring(L, 1);
    int64_t ns;
    if (sw_parse_duration_terms(s, &ns) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L,
                        "time.parse_duration: invalid duration \"%s\" (expected e.g. \"1m30s\", "
                        "\"250ms\", \"1.5h\" or a number of seconds)",
                        s);
        return 2;
    }
    lua_pushnumber(L, (double)ns / 1e9);
    return 1;
}

int sw_open_time(lua_State *L)
{
    static const luaL_Reg fns[] = {{"now", sw_api_now}, {"sleep", sw_api_sleep},
                                   {"after", t_after},  {"ticker", t_ticker},
                                   {"unix", t_unix},    {"format", t_format},
                                   {"parse", t_parse},  {"parse_duration", t_parse_duration},
                                   {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
