/* Runtime benchmarks, each against a baseline measured in the same run:
 *  - ping-pong round trips between two processes (send + inbox receive, small table), against
 *    a raw C copy of the same table between two bare LuaJIT states (half a round trip each);
 *  - spawning idle processes: spawns/s and RSS per live process, against a bare LuaJIT state,
 *    and the RSS of idle processes that used base and string (opened on first use);
 *  - a service's resource accounting (docs/supervision.md "Resources"): ping-pong and
 *    spawning processes that end at once, inside a service against outside any (alternating
 *    rounds, medians);
 *  - preemption: a CPU-bound loop with the count hook against the same loop without it. */
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "api.h"
#include "bench_process.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static const char app[] =
    "namespace: b\n"
    "entries:\n"
    "  - name: pong\n    kind: process.lua\n    source: |\n"
    "      return function()\n"
    "        local inbox = process.inbox()\n"
    "        while true do\n"
    "          local m = inbox:receive()\n"
    "          if m:topic() == 'stop' then return end\n"
    "          process.send(m:from(), 'pong', m:data())\n"
    "        end\n"
    "      end\n"
    "  - name: ping\n    kind: process.lua\n    source: |\n"
    "      return function(n)\n"
    "        local pong = process.spawn('b:pong')\n"
    "        local inbox = process.inbox()\n"
    "        local payload = { id = 42, name = 'hello', tags = { 'a', 'b' }, ok = true }\n"
    "        process.send(pong, 'ping', payload); inbox:receive()\n"
    "        local t0 = time.bench_now()\n"
    "        for i = 1, n do\n"
    "          process.send(pong, 'ping', payload)\n"
    "          inbox:receive()\n"
    "        end\n"
    "        local dt = time.bench_now() - t0\n"
    "        process.send(pong, 'stop')\n"
    "        return { n = dt }\n"
    "      end\n"
    "  - name: spin\n    kind: process.lua\n    source: |\n"
    "      return function()\n"
    "        local t0 = time.bench_now()\n"
    "        local s = 0 for i = 1, 30000000 do s = s + i % 7 end\n"
    "        return { n = time.bench_now() - t0 }\n"
    "      end\n"
    "  - name: spin_counted\n    kind: process.lua\n    limits: { reductions: 10000 }\n    source: "
    "|\n"
    "      return function()\n"
    "        local t0 = time.bench_now()\n"
    "        local s = 0 for i = 1, 30000000 do s = s + i % 7 end\n"
    "        return { n = time.bench_now() - t0 }\n"
    "      end\n"
    "  - name: idle\n    kind: process.lua\n    source: \"return function() "
    "process.inbox():receive() end\"\n"
    "  - name: idle_builtins\n    kind: process.lua\n    source: \"return function() "
    "local _ = tostring(1) .. ('x'):upper() process.inbox():receive() end\"\n"
    "  - name: quick\n    kind: process.lua\n    source: \"return function() end\"\n"
    "  - name: quick_spawner\n    kind: process.lua\n    source: |\n"
    "      return function(n)\n"
    "        local t0 = time.bench_now()\n"
    "        for i = 1, n do process.spawn('b:quick') end\n"
    "        return { n = time.bench_now() - t0 }\n"
    "      end\n"
    "  - name: spawner\n    kind: process.lua\n    source: |\n"
    "      return function(n, id)\n"
    "        local t0 = time.bench_now()\n"
    "        for i = 1, n do process.spawn(id or 'b:idle') end\n"
    "        local dt = time.bench_now() - t0\n"
    "        time.sleep(0.3)\n"
    "        return { n = dt }\n"
    "      end\n";

/* ---- running one process to its end (bench_process.h) ---- */

static double run_in(sw_runtime *rt, const char *id, const char *service, double arg)
{
    lua_State *L = luaL_newstate();
    lua_pushnumber(L, arg);
    double v = bench_run(rt, id, service, L, 1);
    lua_close(L);
    return v;
}

static double run_process(sw_runtime *rt, const char *id, double arg)
{
    return run_in(rt, id, NULL, arg);
}

/* Spawns n idle processes of entry idle from b:spawner; its time and the RSS they added. */
static double spawn_idle(sw_runtime *rt, const char *idle, int n, long *rss_added)
{
    lua_State *L = luaL_newstate();
    lua_pushnumber(L, n);
    lua_pushstring(L, idle);
    long before = rss_kb();
    double dt = bench_run(rt, "b:spawner", NULL, L, 2);
    *rss_added = rss_kb() - before;
    lua_close(L);
    return dt;
}

/* CPU time this process has used (all threads): what a round costs even when other programs
 * share the machine, where wall time mostly measures them. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One round of n: the rate by wall time (what the process measured) and the CPU time per item. */
static void round_of(sw_runtime *rt, const char *id, const char *service, int n, double *rate,
                     double *cpu_us)
{
    double c0 = cpu_now();
    *rate = n / run_in(rt, id, service, n);
    *cpu_us = (cpu_now() - c0) * 1e6 / n;
}

/* The same process outside any service (nothing accounted, no clock read) and as a service's
 * (its CPU time, memory steps and queued messages accounted), in alternating rounds; prints
 * the medians of the rates and of the CPU time per item (the steadier figure on a loaded
 * machine). */
static void accounting_cost(sw_runtime *rt, const char *what, const char *id, int n)
{
    enum { ROUNDS = 7 };
    double out[ROUNDS], in[ROUNDS], out_cpu[ROUNDS], in_cpu[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        round_of(rt, id, NULL, n, &out[i], &out_cpu[i]);
        round_of(rt, id, "b:service", n, &in[i], &in_cpu[i]);
    }
    double o = bench_median(out, ROUNDS), s = bench_median(in, ROUNDS);
    double oc = bench_median(out_cpu, ROUNDS), sc = bench_median(in_cpu, ROUNDS);
    printf("accounting, %s (medians of %d): in a service %.0f/s, outside any %.0f/s; CPU per "
           "item %.3f us against %.3f us: %+.1f%% (target <= 3%%)\n",
           what, ROUNDS, s, o, sc, oc, 100 * (sc - oc) / oc);
}

/* ---- baselines ---- */

static void push_payload(lua_State *L)
{
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, 42);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, "hello");
    lua_setfield(L, -2, "name");
    lua_createtable(L, 2, 0);
    lua_pushstring(L, "a");
    lua_rawseti(L, -2, 1);
    lua_pushstring(L, "b");
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, "tags");
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ok");
}

/* Direct recursive copy of the value at idx in `from` onto `to`: no buffer, no checks. */
static void raw_copy(lua_State *from, int idx, lua_State *to)
{
    switch (lua_type(from, idx)) {
    case LUA_TNUMBER: lua_pushnumber(to, lua_tonumber(from, idx)); break;
    case LUA_TBOOLEAN: lua_pushboolean(to, lua_toboolean(from, idx)); break;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(from, idx, &len);
        lua_pushlstring(to, s, len);
        break;
    }
    case LUA_TTABLE:
        lua_newtable(to);
        lua_pushnil(from);
        while (lua_next(from, idx < 0 ? idx - 1 : idx)) {
            raw_copy(from, -2, to);
            raw_copy(from, -1, to);
            lua_rawset(to, -3);
            lua_pop(from, 1);
        }
        break;
    default: lua_pushnil(to);
    }
}

static double raw_copies_per_second(void)
{
    lua_State *a = luaL_newstate(), *b = luaL_newstate();
    push_payload(a);
    const int n = 1000000;
    double t0 = bench_now();
    for (int i = 0; i < n; i++) {
        raw_copy(a, 1, b);
        lua_settop(b, 0);
        if ((i & 1023) == 0) lua_gc(b, LUA_GCSTEP, 0);
    }
    double dt = bench_now() - t0;
    lua_close(a);
    lua_close(b);
    return n / dt;
}

static long bare_state_bytes(void)
{
    lua_State *L = luaL_newstate();
    long kb = lua_gc(L, LUA_GCCOUNT, 0);
    lua_close(L);
    return kb * 1024;
}

int main(int argc, char **argv)
{
    int round_trips = argc > 1 ? atoi(argv[1]) : 300000;
    int spawns = argc > 2 ? atoi(argv[2]) : 100000;
    sw_registry *reg = bench_load(app);
    sw_log *log = sw_log_new(stderr, false, SW_LOG_WARN, false);
    sw_runtime_config cfg = {.workers =
                                 getenv("BENCH_WORKERS") ? atoi(getenv("BENCH_WORKERS")) : 2};
    cfg.limits.processes = 10 * (int64_t)spawns; /* the host's default (100,000) counts the
                                                    ping-pong pair too: room for every spawn */
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, log, &cfg);

    if (round_trips > 0) {
        double raw = raw_copies_per_second();
        double dt = run_process(rt, "b:ping", round_trips);
        double rtps = round_trips / dt;
        printf("ping-pong: %d round trips in %.3f s = %.0f round trips/s (target >= 1000000)\n",
               round_trips, dt, rtps);
        printf("  floor: raw C copy between two bare LuaJIT states %.0f msgs/s = %.0f round "
               "trips/s; ratio %.2f\n",
               raw, raw / 2, rtps / (raw / 2));
    }

    if (spawns > 0) {
        long added;
        double spawn_dt = spawn_idle(rt, "b:idle", spawns, &added);
        size_t live = sw_pidtable_live(&rt->pids);
        printf("spawn: %d processes in %.3f s = %.0f spawns/s (target >= 50000)\n", spawns,
               spawn_dt, spawns / spawn_dt);
        printf("  %zu alive, RSS +%ld KB = %.1f KB per idle process (target <= 18 KB); bare LuaJIT "
               "state %.1f KB\n",
               live, added, (double)added / (double)(live ? live : 1), bare_state_bytes() / 1024.0);
        /* base and string open on first use: what an idle process that used them holds */
        int more = spawns < 10000 ? spawns : 10000;
        double more_dt = spawn_idle(rt, "b:idle_builtins", more, &added);
        printf("  idle after using tostring and a string method: %.1f KB per process (%d more, "
               "%.0f spawns/s)\n",
               (double)added / more, more, more / more_dt);
    }
    if (round_trips > 0) accounting_cost(rt, "ping-pong round trips", "b:ping", round_trips / 3);
    if (spawns > 0) accounting_cost(rt, "spawns of processes that end", "b:quick_spawner", 20000);
    if (getenv("BENCH_NO_PREEMPT")) {
        sw_runtime_free(rt);
        sw_log_free(log);
        sw_registry_free(reg);
        return 0;
    }

    /* The same process in a runtime that never preempts is the baseline; runs alternate so
     * drift in machine speed hits both alike, and medians are compared. */
    sw_runtime_config never = {.workers = cfg.workers, .slice_ns = SW_SLICE_NEVER};
    sw_api_use(&never);
    sw_runtime *base = sw_runtime_new(reg, log, &never);
    double s_runs[7], b_runs[7];
    for (int i = 0; i < 7; i++) {
        s_runs[i] = run_process(rt, "b:spin", 0);
        b_runs[i] = run_process(base, "b:spin", 0);
    }
    double counted = run_process(rt, "b:spin_counted", 0);
    sw_runtime_free(base);
    sw_runtime_free(rt);
    double sliced = bench_median(s_runs, 7), bare = bench_median(b_runs, 7);
    printf("preemption (medians of 7): CPU loop in a process preempted every 2 ms %.3f s; never "
           "preempted %.3f s: "
           "%.0f%% speed (target >= 90%%)\n",
           sliced, bare, 100 * bare / sliced);
    printf("  with an explicit limits.reductions = 10000 (count hook): %.3f s, %.0f%% speed\n",
           counted, 100 * bare / counted);
    sw_log_free(log);
    sw_registry_free(reg);
    return 0;
}
