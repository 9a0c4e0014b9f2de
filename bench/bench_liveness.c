/* Liveness benchmark (docs/supervision.md "Watchdog"): the cost of service.alive(), the
 * watchdog's ping, per call from a service's process, against two baselines measured in the
 * same run: a Lua function that returns true (the floor of any call) and service.id() (a host
 * call of the same module that reads a field). service.alive() should cost about what
 * service.id() costs plus a monotonic clock read: it queues nothing and wakes nobody. Median
 * of 5 runs each; default process settings. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "bench_process.h"
#include "bench_util.h"

static const char app[] =
    "namespace: b\nentries:\n"
    "  - name: svc\n    kind: process.service\n    process: loop\n"
    "    lifecycle: { watchdog: 10s }\n"
    "  - name: loop\n    kind: process.lua\n    source: |\n"
    "      return function(what, n)\n"
    "        local alive, id, yes = service.alive, service.id, function() return true end\n"
    "        local f = what == 'alive' and alive or what == 'id' and id or yes\n"
    "        assert(f())\n"
    "        local t0 = time.now()\n"
    "        for i = 1, n do f() end\n"
    "        return tostring(time.now() - t0) -- a bare number would be an exit code\n"
    "      end\n";

/* Nanoseconds per call: the median of 5 runs of n calls, run as the service b:svc. */
static double ns_per_call(sw_runtime *rt, const char *what, double n)
{
    double v[5];
    for (int i = 0; i < 5; i++) {
        lua_State *L = luaL_newstate();
        lua_pushstring(L, what);
        lua_pushnumber(L, n);
        double s = bench_run(rt, "b:loop", "b:svc", L, 2);
        lua_close(L);
        if (s < 0) exit(1);
        v[i] = s / n * 1e9;
    }
    return bench_median(v, 5);
}

int main(void)
{
    sw_registry *reg = bench_load(app);
    sw_runtime_config cfg = {.workers = 1};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, NULL, &cfg);
    const double n = 5e6;
    double floor = ns_per_call(rt, "floor", n), id = ns_per_call(rt, "id", n),
           alive = ns_per_call(rt, "alive", n);
    printf("service.alive(), median of 5 runs of %.0f calls from a service's process:\n", n);
    printf("  floor: Lua call returning true  %7.1f ns/call\n", floor);
    printf("  service.id()                    %7.1f ns/call\n", id);
    printf(
        "  service.alive()                 %7.1f ns/call  (%.1fx service.id(); %.1f ns over it)\n",
        alive, alive / id, alive - id);
    sw_runtime_free(rt);
    sw_registry_free(reg);
    return 0;
}
