/* security.can from Lua, against its floor measured in the same run: a real process of a
 * service whose context holds 20 policies (10 with conditions, in a group) calls
 * security.can in a loop, and the same process calls a Lua function that returns true.
 * The checked action matches only the last policy (an allow with a condition on actor meta),
 * so every check scans all 20. Also: the same check with a meta table read in place, and
 * a denied one. Median of 5 runs each; default process settings (interpreter, time slices).
 *
 * Token stores (docs/security.md "Tokens"), beside them in the same run: ts:validate from Lua
 * (its guard, the lookup, the actor and scope values it returns), run by a service whose context
 * allows the token operations, in a store holding 10,000 tokens; and sw_token_validate from C
 * alone (what an authenticating endpoint calls), on one thread. */
#include <lauxlib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

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
        "        elseif what == 'validate' then\n"
        "          local ts = security.token_store('tokens')\n"
        "          local a, s = security.new_actor('user:b', { level = 5 }), "
        "security.named_scope('bench')\n"
        "          local tok\n"
        "          for i = 1, 10000 do tok = assert(ts:create(a, s)) end\n"
        "          local validate = ts.validate\n"
        "          t0 = time.now()\n"
        "          for i = 1, n do if validate(ts, tok) then ok = ok + 1 end end\n"
        "        elseif what == 'meta' then for i = 1, n do if can('doc.read', 'doc:1', meta) then "
        "ok = ok + 1 end end\n"
        "        else for i = 1, n do if not can('job.kill', 'queue:a') then ok = ok + 1 end end "
        "end\n"
        "        local dt = time.now() - t0\n"
        "        assert(ok == n, what .. ': ' .. ok .. ' of ' .. n .. ' checks gave the expected "
        "answer')\n"
        "        return { n = dt }\n"
        "      end\n");
    /* the token bench's service: it may mint and use the store (a context of 3 policies) */
    len += (size_t)snprintf(
        y + len, cap - len,
        "  - { name: tokens, kind: security.token_store }\n"
        "  - name: minter\n    kind: process.service\n    process: loop\n    lifecycle:\n"
        "      security: { actor: { id: 'svc:minter' }, groups: [ minting ] }\n"
        "  - { name: m1, kind: security.policy, groups: [ minting ], policy: { actions: "
        "security.impersonate, resources: 'user:*', effect: allow } }\n"
        "  - { name: m2, kind: security.policy, groups: [ minting ], policy: { actions: "
        "security.scope, resources: 'b:bench', effect: allow } }\n"
        "  - { name: m3, kind: security.policy, groups: [ minting ], policy: { actions: "
        "'security.token.*', resources: 'b:tokens', effect: allow } }\n");
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


/* Seconds the loop took, run as the service b:svc (so with its security context); the token
 * loop as b:minter. */
static double run_loop(sw_runtime *rt, const char *what, double n)
{
    lua_State *L = luaL_newstate();
    lua_pushstring(L, what);
    lua_pushnumber(L, n);
    double v = bench_run(rt, "b:loop", strcmp(what, "validate") ? "b:svc" : "b:minter", L, 2);
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

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* sw_token_validate from C, in a store of 10,000 tokens: validations/s, median of 5. */
static double c_validate_rate(sw_runtime *rt, double n)
{
    const sw_entry *e = sw_registry_get(rt->registry, "b:tokens");
    sw_token_store *ts = sw_token_store_of(rt->tokens, e);
    sw_security_set *set = sw_runtime_security(rt);
    char err[128], tok[SW_TOKEN_LEN + 1];
    sw_sec_scope *scope = sw_sec_scope_group(set, "b:bench", err, sizeof err);
    sw_sec_actor *actor = sw_sec_actor_new("user:c", 6);
    sw_sec_identity *id = sw_sec_identity_new(actor, scope);
    for (int i = 0; i < 10000; i++) sw_token_create(ts, id, 0, tok, err, sizeof err);
    double v[5];
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (double i = 0; i < n; i++)
            sw_sec_identity_release(sw_token_validate(ts, tok, SW_TOKEN_LEN));
        v[r] = n / (now_s() - t0);
    }
    qsort(v, 5, sizeof *v, cmp_double);
    sw_sec_identity_release(id);
    sw_sec_actor_release(actor);
    sw_sec_scope_release(scope);
    sw_security_release(set);
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
    double validate = median_rate(rt, "validate", n / 4);
    double c_validate = c_validate_rate(rt, n);
    printf("security.can, context of %d policies (%d with conditions), median of 5 runs of %.0f "
           "checks:\n",
           N_POLICIES, N_POLICIES / 2 + 1, n);
    printf("  floor: Lua call returning true     %12.0f calls/s\n", floor);
    printf("  can (allow, scans all 20)          %12.0f checks/s  (%.1fx the floor's time per "
           "call)%s\n",
           can, floor / can, can >= 2e6 ? "" : "  BELOW the 2,000,000/s target");
    printf("  can with a meta table (value_from) %12.0f checks/s  (%.1fx)\n", meta, floor / meta);
    printf("  can, undefined -> false            %12.0f checks/s  (%.1fx)\n", deny, floor / deny);
    printf("token store of 10,000 tokens:\n");
    printf("  ts:validate from Lua (guarded)     %12.0f calls/s   (%.2fx a plain can's time)%s\n",
           validate, can / validate, validate >= 1e5 ? "" : "  BELOW the 100,000/s target");
    printf("  sw_token_validate from C           %12.0f calls/s\n", c_validate);
    sw_runtime_free(rt);
    sw_registry_free(reg);
    free(yaml);
    return 0;
}
