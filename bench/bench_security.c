/* security.can from Lua, against its floor measured in the same run: a real process of a
 * service whose context holds 20 policies (10 with conditions, in a group) calls
 * security.can in a loop, and the same process calls a Lua function that returns true.
 * The checked action matches only the last policy (an allow with a condition on actor meta),
 * so every check scans all 20. Also: the same check with a meta table read in place, and
 * a denied one. Median of 5 runs each; default process settings (interpreter, time slices). */
#include <lauxlib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "bench_process.h"

#define N_POLICIES 20

static char *app_yaml(void)
{
    size_t cap = 16384, len = 0;
    char *y = malloc(cap);
    if (!y) abort();
    len += (size_t)snprintf(
        y + len, cap - len,
        "namespace: b\nentries:\n"
        "  - name: svc\n    kind: process.service\n    process: loop\n    lifecycle:\n      "
        "security:\n"
        "        actor: { id: 'svc:bench', meta: { level: 5, team: backend } }\n        groups: [ "
        "bench ]\n"
        "  - name: loop\n    kind: process.lua\n    source: |\n"
        "      return function(what, n)\n"
        "        local can, yes = security.can, function() return true end\n"
        "        local meta = { owner = 'svc:bench' }\n"
        "        local ok = 0\n"
        "        local t0 = time.now()\n"
        "        if what == 'floor' then for i = 1, n do if yes() then ok = ok + 1 end end\n"
        "        elseif what == 'can' then for i = 1, n do if can('job.run', 'queue:a') then ok = "
        "ok + 1 end end\n"
        "        elseif what == 'meta' then for i = 1, n do if can('doc.read', 'doc:1', meta) then "
        "ok = ok + 1 end end\n"
        "        else for i = 1, n do if not can('job.kill', 'queue:a') then ok = ok + 1 end end "
        "end\n"
        "        local dt = time.now() - t0\n"
        "        assert(ok == n, what .. ': ' .. ok .. ' of ' .. n .. ' checks gave the expected "
        "answer')\n"
        "        return tostring(dt)\n"
        "      end\n");
    for (int i = 1; i <= N_POLICIES; i++) {
        bool cond = i % 2 == 0;
        const char *action = i == N_POLICIES       ? "job.run"
                             : i == N_POLICIES - 1 ? "doc.read"
                                                   : "svc.op%d";
        char act[32];
        snprintf(act, sizeof act, action, i);
        len += (size_t)snprintf(y + len, cap - len,
                                "  - name: p%d\n    kind: security.policy\n    groups: [ bench ]\n"
                                "    policy:\n      actions: [ '%s', 'other.op%d' ]\n      "
                                "resources: '%s'\n      effect: allow\n",
                                i, act, i,
                                i == N_POLICIES       ? "queue:*"
                                : i == N_POLICIES - 1 ? "doc:*"
                                                      : "res:*");
        if (cond)
            len += (size_t)snprintf(
                y + len, cap - len,
                "      conditions: [ { field: actor.meta.level, operator: gte, value: %d } ]\n",
                i == N_POLICIES ? 3 : 4);
        else if (i == N_POLICIES - 1)
            len += (size_t)snprintf(y + len, cap - len,
                                    "      conditions: [ { field: meta.owner, operator: eq, "
                                    "value_from: actor.id } ]\n");
    }
    return y;
}


/* Seconds the loop took, run as the service b:svc (so with its security context). */
static double run_loop(sw_runtime *rt, const char *what, double n)
{
    lua_State *L = luaL_newstate();
    lua_pushstring(L, what);
    lua_pushnumber(L, n);
    double v = bench_run(rt, "b:loop", "b:svc", L, 2);
    lua_close(L);
    if (v < 0) exit(1);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_rate(sw_runtime *rt, const char *what, double n)
{
    double v[5];
    for (int i = 0; i < 5; i++) v[i] = n / run_loop(rt, what, n);
    qsort(v, 5, sizeof *v, cmp_double);
    return v[2];
}

int main(void)
{
    char *yaml = app_yaml();
    sw_registry_file f = {"/bench/security/app.yaml", yaml, strlen(yaml)};
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *reg = sw_registry_load_files("/bench/security", &f, 1, &d);
    if (!reg) {
        sw_diags_finish(&d);
        sw_diags_print(&d, stderr);
        return 1;
    }
    sw_diags_free(&d);
    sw_runtime_config cfg = {.workers = 1};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, NULL, &cfg);
    const double n = 2e6;
    double floor = median_rate(rt, "floor", n * 5);
    double can = median_rate(rt, "can", n);
    double meta = median_rate(rt, "meta", n);
    double deny = median_rate(rt, "deny", n);
    printf("security.can, context of %d policies (%d with conditions), median of 5 runs of %.0f "
           "checks:\n",
           N_POLICIES, N_POLICIES / 2 + 1, n);
    printf("  floor: Lua call returning true     %12.0f calls/s\n", floor);
    printf("  can (allow, scans all 20)          %12.0f checks/s  (%.1fx the floor's time per "
           "call)%s\n",
           can, floor / can, can >= 2e6 ? "" : "  BELOW the 2,000,000/s target");
    printf("  can with a meta table (value_from) %12.0f checks/s  (%.1fx)\n", meta, floor / meta);
    printf("  can, undefined -> false            %12.0f checks/s  (%.1fx)\n", deny, floor / deny);
    sw_runtime_free(rt);
    sw_registry_free(reg);
    free(yaml);
    return 0;
}
