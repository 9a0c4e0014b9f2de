/* The policy engine through its C interface (security-cases.md decision rows 1-38, plus the
 * operators the rows do not reach): a registry loaded from inline YAML with one service per
 * row (its actor and policies as the row says, the call's meta in the service's `config`),
 * compiled into a real policy set and checked. Then publishing sets while other threads check
 * in a tight loop through the runtime (each result is the old or the new decision). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>

#include <cmocka.h>

#include <lauxlib.h>

#include "api.h"
#include "message.h"
#include "proc.h"
#include "registry_helpers.h"
#include "runtime.h"
#include "security.h"

#define POLICIES                                                                                   \
    "  - { name: proc, kind: process.lua, source: 'return function() end' }\n"                     \
    "  - name: P1\n    kind: security.policy\n"                                                    \
    "    policy: { actions: [data.read, data.list], resources: 'app.data:*', effect: allow }\n"    \
    "  - name: D2\n    kind: security.policy\n"                                                    \
    "    policy: { actions: '*', resources: 'app.data:secret*', effect: deny,\n"                   \
    "              conditions: [ { field: actor.meta.clearance, operator: lt, value: 3 } ] }\n"    \
    "  - name: P3\n    kind: security.policy\n"                                                    \
    "    policy: { actions: '*', resources: '*', effect: allow,\n"                                 \
    "              conditions: [ { field: actor.meta.role, operator: eq, value: admin } ] }\n"     \
    "  - name: P4\n    kind: security.policy\n"                                                    \
    "    policy: { actions: [doc.read, doc.write], resources: 'doc:*', effect: allow,\n"           \
    "              conditions: [ { field: meta.owner, operator: eq, value_from: actor.id } ] }\n"  \
    "  - name: P5\n    kind: security.policy\n"                                                    \
    "    policy: { actions: 'registry.read.*', resources: '*', effect: allow }\n"                  \
    "  - name: D6\n    kind: security.policy\n"                                                    \
    "    policy: { actions: '*', resources: 'tenant.*', effect: deny,\n"                           \
    "              conditions: [ { field: actor.meta.tenant, operator: ne, value: acme } ] }\n"    \
    "  - name: P7\n    kind: security.policy\n"                                                    \
    "    policy: { actions: job.run, resources: 'queue:*', effect: allow,\n"                       \
    "              conditions: [ { field: actor.meta.team, operator: in, value: [backend, infra] " \
    "} ] }\n"                                                                                      \
    "  - name: P8\n    kind: security.policy\n"                                                    \
    "    policy: { actions: audit.write, resources: 'audit:*', effect: allow,\n"                   \
    "              conditions: [ { field: actor.meta.service, operator: exists, value: true } ] "  \
    "}\n"                                                                                          \
    "  - name: P9\n    kind: security.policy\n"                                                    \
    "    policy: { actions: billing.read, resources: '*', effect: allow,\n"                        \
    "              conditions: [ { field: actor.meta.org.plan, operator: eq, value: pro } ] }\n"   \
    "  - name: P10\n    kind: security.policy\n"                                                   \
    "    policy: { actions: api.call, resources: '*', effect: allow,\n"                            \
    "              conditions: [ { field: resource, operator: matches, value: "                    \
    "'^api:/v[0-9]+/public/' } ] }\n"                                                              \
    "  - name: D1\n    kind: security.policy\n"                                                    \
    "    policy: { actions: data.delete, resources: '*', effect: deny }\n"                         \
    "  - name: P11\n    kind: security.policy\n"                                                   \
    "    policy: { actions: '*', resources: 'tenant.*', effect: allow }\n"                         \
    "  - name: P13\n    kind: security.policy\n"                                                   \
    "    policy: { actions: doc.read, resources: 'doc:*', effect: allow,\n"                        \
    "              conditions: [ { field: meta.status, operator: ne, value: deleted } ] }\n"

typedef struct row {
    int n;                /* the row of security-cases.md (0: an extra case) */
    const char *policies; /* YAML flow list */
    const char *actor;    /* YAML flow mapping for `actor`, or NULL: no actor */
    const char *meta;     /* YAML for the call's meta, or NULL: none */
    const char *action, *resource;
    sw_sec_decision want;
} row;

#define U SW_SEC_UNDEFINED
#define A SW_SEC_ALLOW
#define D SW_SEC_DENY

static const row rows[] = {
    {1, "[P1]", "{id: u1}", NULL, "data.read", "app.data:x", A},
    {2, "[P1]", "{id: u1}", NULL, "data.write", "app.data:x", U},
    {3, "[P1]", "{id: u1}", NULL, "data.read", "app.database:x", U},
    {4, "[P1]", "{id: u1}", NULL, "data.read", "app.data:", A},
    {5, "[P1, D2]", "{id: u1, meta: {clearance: 2}}", NULL, "data.read", "app.data:secret1", D},
    {6, "[P1, D2]", "{id: u1, meta: {clearance: 3}}", NULL, "data.read", "app.data:secret1", A},
    {7, "[P1, D2]", "{id: u1}", NULL, "data.read", "app.data:secret1", A},
    {8, "[P1, D2]", "{id: u1, meta: {clearance: '2'}}", NULL, "data.read", "app.data:secret1", D},
    {9, "[P3]", "{id: u1, meta: {role: admin}}", NULL, "anything.at.all", "thing:1", A},
    {10, "[P3]", "{id: u1, meta: {role: Admin}}", NULL, "anything.at.all", "thing:1", U},
    {11, "[P3]", "{id: u1}", NULL, "anything.at.all", "thing:1", U},
    {12, "[P4]", "{id: u1}", "{owner: u1}", "doc.write", "doc:1", A},
    {13, "[P4]", "{id: u1}", "{owner: u2}", "doc.write", "doc:1", U},
    {14, "[P4]", "{id: u1}", NULL, "doc.write", "doc:1", U},
    {15, "[P5]", "{id: u1}", NULL, "registry.read.doc", "x", A},
    {16, "[P5]", "{id: u1}", NULL, "registry.read", "x", U},
    {17, "[P5]", "{id: u1}", NULL, "registry.readme", "x", U},
    {18, "[P11, D6]", "{id: u1, meta: {tenant: acme}}", NULL, "any", "tenant.x", A},
    {19, "[P11, D6]", "{id: u1, meta: {tenant: evil}}", NULL, "any", "tenant.x", D},
    {20, "[P11, D6]", "{id: u1}", NULL, "any", "tenant.x", D},
    {21, "[P7]", "{id: u1, meta: {team: infra}}", NULL, "job.run", "queue:a", A},
    {22, "[P7]", "{id: u1, meta: {team: sales}}", NULL, "job.run", "queue:a", U},
    {23, "[P8]", "{id: u1, meta: {service: false}}", NULL, "audit.write", "audit:x", A},
    {24, "[P8]", "{id: u1}", NULL, "audit.write", "audit:x", U},
    {25, "[P9]", "{id: u1, meta: {org: {plan: pro}}}", NULL, "billing.read", "x", A},
    {26, "[P9]", "{id: u1, meta: {org: pro}}", NULL, "billing.read", "x", U},
    {27, "[P10]", "{id: u1}", NULL, "api.call", "api:/v2/public/x", A},
    {28, "[P10]", "{id: u1}", NULL, "api.call", "api:/vX/public/x", U},
    {29, "[P10]", "{id: u1}", NULL, "api.call", "xapi:/v2/public/x", U},
    {30, "[P3, D1]", "{id: u1, meta: {role: admin}}", NULL, "data.delete", "x", D},
    {31, "[D1, P3]", "{id: u1, meta: {role: admin}}", NULL, "data.delete", "x", D},
    {32, "[]", "{id: u1}", NULL, "anything", "x", U},
    {33, "[P3]", "{id: u1, meta: {role: [admin]}}", NULL, "anything", "x", U},
    {34, "[P4]", "{id: '7'}", "{owner: 7}", "doc.read", "doc:1", U},
    {37, "[P13]", "{id: u1}", NULL, "doc.read", "doc:1", A},
    {38, "[P13]", "{id: u1}", "{status: deleted}", "doc.read", "doc:1", U},
};

/* Extra operator cases: each policy below is allow (E*) or deny (X*) on action op.* / "*". */
#define EXTRA_POLICIES                                                                       \
    "  - name: Egte\n    kind: security.policy\n"                                            \
    "    policy: { actions: op.gte, resources: '*', effect: allow,\n"                        \
    "              conditions: [ { field: meta.n, operator: gte, value: 5 } ] }\n"           \
    "  - name: Enin\n    kind: security.policy\n"                                            \
    "    policy: { actions: op.nin, resources: '*', effect: allow,\n"                        \
    "              conditions: [ { field: meta.s, operator: nin, value: [a, b] } ] }\n"      \
    "  - name: Econtains\n    kind: security.policy\n"                                       \
    "    policy: { actions: op.contains, resources: '*', effect: allow,\n"                   \
    "              conditions: [ { field: meta.tags, operator: contains, value: red } ] }\n" \
    "  - name: Xncontains\n    kind: security.policy\n"                                      \
    "    policy: { actions: op.ncontains, resources: '*', effect: deny,\n"                   \
    "              conditions: [ { field: meta.tags, operator: ncontains, value: ok } ] }\n" \
    "  - name: Enexists\n    kind: security.policy\n"                                        \
    "    policy: { actions: op.nexists, resources: '*', effect: allow,\n"                    \
    "              conditions: [ { field: meta.banned, operator: nexists } ] }\n"            \
    "  - name: Enmatches\n    kind: security.policy\n"                                       \
    "    policy: { actions: op.nmatches, resources: '*', effect: allow,\n"                   \
    "              conditions: [ { field: meta.s, operator: nmatches, value: '^adm' } ] }\n" \
    "  - name: Ebig\n    kind: security.policy\n"                                            \
    "    policy: { actions: op.big, resources: '*', effect: allow,\n"                        \
    "              conditions: [ { field: meta.s, operator: matches, value: '^(a|aa)*$' } ] }\n"

static const row extra[] = {
    {0, "[Egte]", "{id: u1}", "{n: 5}", "op.gte", "x", A},
    {0, "[Egte]", "{id: u1}", "{n: 4.5}", "op.gte", "x", U},
    {0, "[Egte]", "{id: u1}", "{n: '9'}", "op.gte", "x", U}, /* no coercion */
    {0, "[Egte]", "{id: u1}", "{n: true}", "op.gte", "x", U},
    {0, "[Enin]", "{id: u1}", "{s: c}", "op.nin", "x", A},
    {0, "[Enin]", "{id: u1}", "{s: a}", "op.nin", "x", U},
    {0, "[Enin]", "{id: u1}", NULL, "op.nin", "x", A},       /* missing: negation holds */
    {0, "[Enin]", "{id: u1}", "{s: [a]}", "op.nin", "x", U}, /* type error: allow does not apply */
    {0, "[Econtains]", "{id: u1}", "{tags: [blue, red]}", "op.contains", "x", A},
    {0, "[Econtains]", "{id: u1}", "{tags: [blue]}", "op.contains", "x", U},
    {0, "[Econtains]", "{id: u1}", "{tags: 'infrared'}", "op.contains", "x", A}, /* substring */
    {0, "[Econtains]", "{id: u1}", "{tags: 3}", "op.contains", "x", U},
    {0, "[Xncontains, P3]", "{id: u1, meta: {role: admin}}", "{tags: [ok]}", "op.ncontains", "x",
     A},
    {0, "[Xncontains, P3]", "{id: u1, meta: {role: admin}}", "{tags: [no]}", "op.ncontains", "x",
     D},
    {0, "[Xncontains, P3]", "{id: u1, meta: {role: admin}}", "{tags: 7}", "op.ncontains", "x",
     D}, /* type error: deny applies */
    {0, "[Enexists]", "{id: u1}", NULL, "op.nexists", "x", A},
    {0, "[Enexists]", "{id: u1}", "{banned: false}", "op.nexists", "x", U},
    {0, "[Enmatches]", "{id: u1}", "{s: user}", "op.nmatches", "x", A},
    {0, "[Enmatches]", "{id: u1}", "{s: admin}", "op.nmatches", "x", U},
    {0, "[Enmatches]", "{id: u1}", "{s: 12}", "op.nmatches", "x", U},
    {0, "[Ebig]", "{id: u1}", "{s: aaaaaaaa}", "op.big", "x", A},
    {0, "[Ebig]", "{id: u1}", "{s: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab}",
     "op.big", "x", U},
};

/* One service per row: r<i>, with the row's actor, policies and (as config) the call meta. */
static char *rows_yaml(const row *rs, size_t n)
{
    size_t cap = 65536 + n * 512;
    char *y = malloc(cap);
    assert_non_null(y);
    size_t len = (size_t)snprintf(y, cap, "namespace: t\nentries:\n%s%s", POLICIES, EXTRA_POLICIES);
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(
            y + len, cap - len,
            "  - name: r%zu\n    kind: process.service\n    process: proc\n"
            "    config: %s\n    lifecycle:\n      security:\n        policies: %s\n",
            i, rs[i].meta ? rs[i].meta : "~", rs[i].policies);
        if (rs[i].actor)
            len += (size_t)snprintf(y + len, cap - len, "        actor: %s\n", rs[i].actor);
    }
    return y;
}

static void check_rows(const row *rs, size_t n)
{
    char *yaml = rows_yaml(rs, n);
    sw_registry *r = t_must_load(yaml);
    char err[256];
    sw_security_set *set = sw_security_compile(r, err, sizeof err);
    assert_non_null(set);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "t:r%zu", i);
        const sw_sec_ctx *ctx = sw_security_ctx_of(set, id);
        assert_non_null(ctx);
        sw_sec_value meta;
        sw_sec_value_of_node(sw_registry_get(r, id)->as.service.config, &meta);
        sw_sec_decision got =
            sw_security_check(ctx, true, rs[i].action, rs[i].resource, rs[i].meta ? &meta : NULL);
        if (got != rs[i].want)
            fail_msg("row %d (#%zu: %s %s on %s, meta %s): got %s, want %s", rs[i].n, i,
                     rs[i].policies, rs[i].action, rs[i].resource, rs[i].meta ? rs[i].meta : "none",
                     sw_sec_decision_names[got], sw_sec_decision_names[rs[i].want]);
    }
    sw_security_release(set);
    sw_registry_free(r); /* the set held its own reference until now */
    free(yaml);
}

static void test_decision_rows(void **state)
{
    (void)state;
    check_rows(rows, sizeof rows / sizeof *rows);
}

static void test_operators(void **state)
{
    (void)state;
    check_rows(extra, sizeof extra / sizeof *extra);
}

/* Row 31 with the entries themselves in the other order in the file. */
static void test_order_never_matters(void **state)
{
    (void)state;
    static const char *const orders[] = {
        "namespace: t\nentries:\n"
        "  - { name: D1, kind: security.policy, policy: { actions: data.delete, resources: '*', "
        "effect: deny } }\n"
        "  - { name: P3, kind: security.policy, policy: { actions: '*', resources: '*', effect: "
        "allow } }\n",
        "namespace: t\nentries:\n"
        "  - { name: P3, kind: security.policy, policy: { actions: '*', resources: '*', effect: "
        "allow } }\n"
        "  - { name: D1, kind: security.policy, policy: { actions: data.delete, resources: '*', "
        "effect: deny } }\n"};
    for (int k = 0; k < 2; k++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "%s  - { name: proc, kind: process.lua, source: 'return 1' }\n"
                 "  - { name: s, kind: process.service, process: proc,\n"
                 "      lifecycle: { security: { actor: { id: u1 }, policies: [D1, P3] } } }\n",
                 orders[k]);
        sw_registry *r = t_must_load(yaml);
        char err[256];
        sw_security_set *set = sw_security_compile(r, err, sizeof err);
        const sw_sec_ctx *ctx = sw_security_ctx_of(set, "t:s");
        assert_int_equal(sw_security_check(ctx, true, "data.delete", "x", NULL), SW_SEC_DENY);
        assert_int_equal(sw_security_check(ctx, true, "data.read", "x", NULL), SW_SEC_ALLOW);
        sw_security_release(set);
        sw_registry_free(r);
    }
}

/* Rows 35/36 at the engine: no context or no actor denies in strict mode and allows relaxed. */
static void test_strict_mode(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: t\nentries:\n" POLICIES
                                 "  - { name: s, kind: process.service, process: proc,\n"
                                 "      lifecycle: { security: { policies: [P3] } } }\n"
                                 "  - { name: plain, kind: process.service, process: proc }\n");
    char err[256];
    sw_security_set *set = sw_security_compile(r, err, sizeof err);
    const sw_sec_ctx *no_actor = sw_security_ctx_of(set, "t:s");
    assert_non_null(no_actor);
    assert_null(no_actor->actor_id);
    assert_null(sw_security_ctx_of(set, "t:plain"));
    assert_int_equal(sw_security_check(no_actor, true, "x", "y", NULL), SW_SEC_DENY);
    assert_int_equal(sw_security_check(no_actor, false, "x", "y", NULL), SW_SEC_ALLOW);
    assert_int_equal(sw_security_check(NULL, true, "x", "y", NULL), SW_SEC_DENY);
    assert_int_equal(sw_security_check(NULL, false, "x", "y", NULL), SW_SEC_ALLOW);
    sw_security_release(set);
    sw_registry_free(r);
}

/* Groups: a service gets the policies of each group it names, once even if also named. */
static void test_groups_dedup(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: t\nentries:\n"
                    "  - { name: proc, kind: process.lua, source: 'return 1' }\n"
                    "  - { name: a, kind: security.policy, groups: [readers, other:g], policy: { "
                    "actions: a, resources: '*', effect: allow } }\n"
                    "  - { name: b, kind: security.policy, groups: [readers], policy: { actions: "
                    "b, resources: '*', effect: allow } }\n"
                    "  - { name: c, kind: security.policy, policy: { actions: c, resources: '*', "
                    "effect: allow } }\n"
                    "  - { name: s, kind: process.service, process: proc,\n"
                    "      lifecycle: { security: { actor: { id: u1 }, groups: [readers, "
                    "'other:g'], policies: [a, c] } } }\n");
    char err[256];
    sw_security_set *set = sw_security_compile(r, err, sizeof err);
    const sw_sec_ctx *ctx = sw_security_ctx_of(set, "t:s");
    assert_int_equal(ctx->n, 3);
    assert_string_equal(sw_sec_ctx_policy(ctx, 0)->id, "t:a");
    assert_string_equal(sw_sec_ctx_policy(ctx, 1)->id, "t:b");
    assert_string_equal(sw_sec_ctx_policy(ctx, 2)->id, "t:c");
    sw_security_release(set);
    sw_registry_free(r);
}

/* A service without lifecycle.security runs with that of the nearest group containing it. */
static void test_group_context(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: t\nentries:\n"
                    "  - { name: proc, kind: process.lua, source: 'return 1' }\n"
                    "  - { name: a, kind: security.policy, policy: { actions: a, resources: '*', "
                    "effect: allow } }\n"
                    "  - { name: b, kind: security.policy, policy: { actions: b, resources: '*', "
                    "effect: allow } }\n"
                    "  - { name: outer, kind: service.group, children: [inner],\n"
                    "      lifecycle: { security: { actor: { id: g1 }, policies: [a] } } }\n"
                    "  - { name: inner, kind: service.group, children: [plain, own] }\n"
                    "  - { name: plain, kind: process.service, process: proc }\n"
                    "  - { name: own, kind: process.service, process: proc,\n"
                    "      lifecycle: { security: { actor: { id: s1 }, policies: [b] } } }\n"
                    "  - { name: alone, kind: process.service, process: proc }\n");
    char err[256];
    sw_security_set *set = sw_security_compile(r, err, sizeof err);
    const sw_sec_ctx *plain = sw_security_ctx_of(set, "t:plain"),
                     *own = sw_security_ctx_of(set, "t:own");
    assert_non_null(plain);
    assert_string_equal(plain->actor_id, "g1");
    assert_int_equal(sw_security_check(plain, true, "a", "x", NULL), SW_SEC_ALLOW);
    assert_int_equal(sw_security_check(plain, true, "b", "x", NULL), SW_SEC_UNDEFINED);
    assert_string_equal(own->actor_id, "s1");
    assert_int_equal(sw_security_check(own, true, "a", "x", NULL), SW_SEC_UNDEFINED);
    assert_int_equal(sw_security_check(own, true, "b", "x", NULL), SW_SEC_ALLOW);
    assert_null(sw_security_ctx_of(set, "t:alone"));
    sw_security_release(set);
    sw_registry_free(r);
}

/* ---- publishing while checking ---- */

#define APP_VERSION(effect)                                                                       \
    "namespace: t\nentries:\n"                                                                    \
    "  - { name: proc, kind: process.lua, source: 'return 1' }\n"                                 \
    "  - name: loop\n    kind: process.lua\n    source: |\n"                                      \
    "      return function()\n"                                                                   \
    "        local seen, last, changes = { allow = 0, deny = 0 }, nil, 0\n"                       \
    "        for i = 1, 20000000 do\n"                                                            \
    "          local d = security.check('job.run', 'queue:a')\n"                                  \
    "          seen[d] = (seen[d] or 0) + 1\n"                                                    \
    "          if d ~= last then changes, last = changes + 1, d end\n"                            \
    "          if changes >= 20 then break end\n"                                                 \
    "        end\n"                                                                               \
    "        local n = 0 for _ in pairs(seen) do n = n + 1 end\n"                                 \
    "        return ('%d %d %d %d'):format(seen.allow, seen.deny, n, changes)\n"                  \
    "      end\n"                                                                                 \
    "  - { name: base, kind: security.policy, policy: { actions: job.run, resources: '*', "       \
    "effect: allow } }\n"                                                                         \
    "  - { name: flip, kind: security.policy, policy: { actions: job.run, resources: 'queue:*', " \
    "effect: " effect " } }\n"                                                                    \
    "  - { name: s, kind: process.service, process: proc,\n"                                      \
    "      lifecycle: { security: { actor: { id: u1 }, policies: [base, flip] } } }\n"

typedef struct checker {
    sw_runtime *rt;
    atomic_bool *stop;
    long counts[3];
    long refreshes;
} checker;

/* What a process does (api_security.c): compare the current set with the cached one, take a
 * new reference only when it changed, check with exactly that set. */
static void *check_loop(void *arg)
{
    checker *c = arg;
    sw_security_set *held = NULL;
    const sw_sec_ctx *ctx = NULL;
    while (!atomic_load(c->stop)) {
        if (atomic_load_explicit(&c->rt->security, memory_order_acquire) != held) {
            sw_security_set *now = sw_runtime_security(c->rt);
            sw_security_release(held);
            held = now;
            ctx = sw_security_ctx_of(held, "t:s");
            c->refreshes++;
        }
        c->counts[sw_security_check(ctx, true, "job.run", "queue:a", NULL)]++;
    }
    sw_security_release(held);
    return NULL;
}

static void test_publish_while_checking(void **state)
{
    (void)state;
    sw_registry *allow = t_must_load(APP_VERSION("allow"));
    sw_registry *deny = t_must_load(APP_VERSION("deny"));
    sw_runtime_config cfg = {.workers = 1};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(allow, NULL, &cfg);
    assert_non_null(rt);
    atomic_bool stop = false;
    checker cs[2] = {{rt, &stop, {0}, 0}, {rt, &stop, {0}, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, check_loop, &cs[i]), 0);
    char err[256];
    for (int i = 0; i < 2000; i++) {
        sw_security_set *next = sw_security_compile(i % 2 ? allow : deny, err, sizeof err);
        assert_non_null(next);
        sw_runtime_set_security(rt, next);
        if (i % 100 == 0) usleep(100);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        print_message("checker %d: allow %ld deny %ld undefined %ld, %ld set changes seen\n", i,
                      cs[i].counts[SW_SEC_ALLOW], cs[i].counts[SW_SEC_DENY],
                      cs[i].counts[SW_SEC_UNDEFINED], cs[i].refreshes);
        assert_int_equal(cs[i].counts[SW_SEC_UNDEFINED], 0); /* only the old or the new decision */
        assert_true(cs[i].counts[SW_SEC_ALLOW] + cs[i].counts[SW_SEC_DENY] > 0);
    }
    sw_runtime_free(rt);
    sw_registry_free(allow);
    sw_registry_free(deny);
}

/* ---- the same with a real process checking from Lua ---- */

typedef struct waiter {
    atomic_bool done;
    char result[128];
} waiter;

static void on_exit_cb(void *arg, uint64_t pid, const sw_exit_info *info)
{
    (void)pid;
    waiter *w = arg;
    lua_State *L = luaL_newstate();
    if (info->kind == SW_EXIT_OK && sw_msg_decode(L, info->result, info->result_len) == 1) {
        lua_getfield(L, -1, "value");
        snprintf(w->result, sizeof w->result, "%s",
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    } else {
        snprintf(w->result, sizeof w->result, "failed: %s", info->error ? info->error : "?");
    }
    lua_close(L);
    atomic_store(&w->done, true);
}

static void test_publish_while_a_process_checks(void **state)
{
    (void)state;
    sw_registry *allow = t_must_load(APP_VERSION("allow"));
    sw_registry *deny = t_must_load(APP_VERSION("deny"));
    sw_runtime_config cfg = {.workers = 1};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(allow, NULL, &cfg);
    assert_non_null(rt);
    waiter w = {false, ""};
    sw_spawn s = {.entry = sw_registry_get(allow, "t:loop"),
                  .service = "t:s",
                  .on_exit = on_exit_cb,
                  .cb_arg = &w};
    char err[256];
    assert_true(sw_proc_spawn(rt, &s, err, sizeof err) != 0);
    for (int i = 0; !atomic_load(&w.done); i++) {
        sw_security_set *next = sw_security_compile(i % 2 ? allow : deny, err, sizeof err);
        sw_runtime_set_security(rt, next);
        usleep(300);
    }
    long allowed = 0, denied = 0, kinds = 0, changes = 0;
    print_message("process: %s (allow deny kinds changes)\n", w.result);
    assert_int_equal(sscanf(w.result, "%ld %ld %ld %ld", &allowed, &denied, &kinds, &changes), 4);
    assert_int_equal(kinds, 2); /* never anything but "allow" and "deny" */
    assert_true(changes >= 20); /* it saw the publishes on its next checks */
    assert_true(allowed > 0 && denied > 0);
    sw_runtime_free(rt);
    sw_registry_free(allow);
    sw_registry_free(deny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decision_rows),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_order_never_matters),
        cmocka_unit_test(test_strict_mode),
        cmocka_unit_test(test_groups_dedup),
        cmocka_unit_test(test_group_context),
        cmocka_unit_test(test_publish_while_checking),
        cmocka_unit_test(test_publish_while_a_process_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
