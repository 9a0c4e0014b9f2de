/* Unit tests for the service dependency graph (registry/graph.c): start levels for chains and
 * diamonds, cycle detection with the exact message (docs/registry.md: "app:a -> app:b -> app:a"), each
 * cycle reported once, and a large random DAG whose levels are consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "registry.h"
#include "registry_helpers.h"

/* A growing text buffer for generated registries. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)need + 1 > t->cap) {
        t->cap = (t->n + (size_t)need + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)need;
}

/* "namespace: app" plus a process.lua p; then one service per line added with svc(). */
static void start_app(text *t)
{
    memset(t, 0, sizeof *t);
    put(t, "namespace: app\nentries:\n  - { name: p, kind: process.lua, source: x }\n");
}

static size_t level_of(const sw_registry *r, const char *id)
{
    size_t i = sw_graph_index(&r->graph, t_get(r, id));
    assert_true(i != (size_t)-1);
    return r->graph.level[i];
}

/* Every structural invariant of a built graph. */
static void check_graph_invariants(const sw_registry *r)
{
    const sw_graph *g = &r->graph;
    assert_int_equal(g->n, r->n_services);
    assert_int_equal(g->deps[0], 0);
    assert_int_equal(g->deps[g->n], g->n_edges);
    size_t max_level = 0;
    for (size_t i = 0; i < g->n; i++) {
        assert_true(g->deps[i] <= g->deps[i + 1]);
        assert_int_equal(g->services[i]->kind, SW_KIND_SERVICE);
        assert_int_equal(sw_graph_index(g, g->services[i]), i);
        size_t want = 0;
        for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) {
            const sw_edge *e = &g->edges[k];
            assert_int_equal(e->from, i);
            assert_true(e->to < g->n);
            assert_non_null(e->why);
            if (g->level[e->from] <= g->level[e->to])
                fail_msg("edge %s (level %zu) -> %s (level %zu) does not go down",
                         g->services[e->from]->id, g->level[e->from], g->services[e->to]->id,
                         g->level[e->to]);
            if (g->level[e->to] + 1 > want) want = g->level[e->to] + 1;
        }
        /* 0 with no dependencies, else exactly 1 + the highest dependency level */
        assert_int_equal(g->level[i], want);
        if (g->level[i] > max_level) max_level = g->level[i];
    }
    assert_int_equal(g->n_levels, g->n ? max_level + 1 : 0);
}

/* ---- levels ---- */

static void test_chain_levels(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ c ] } }\n"
        "  - { name: c, kind: process.service, process: p }\n");
    assert_int_equal(level_of(r, "app:c"), 0);
    assert_int_equal(level_of(r, "app:b"), 1);
    assert_int_equal(level_of(r, "app:a"), 2);
    assert_int_equal(r->graph.n_levels, 3);
    assert_int_equal(r->graph.n_edges, 2);
    /* services in load order */
    assert_string_equal(r->graph.services[0]->id, "app:a");
    assert_string_equal(r->graph.services[2]->id, "app:c");
    check_graph_invariants(r);
    sw_registry_free(r);
}

static void test_diamond_levels(void **state)
{
    (void)state;
    /* top -> left, right, long1; left, right -> bottom; long1 -> long2 -> bottom */
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: top, kind: process.service, process: p, lifecycle: { depends_on: [ left, "
        "right ] } }\n"
        "  - { name: left, kind: process.service, process: p, lifecycle: { depends_on: [ bottom ] "
        "} }\n"
        "  - { name: right, kind: process.service, process: p, config: { db: app:bottom } }\n"
        "  - { name: bottom, kind: process.service, process: p }\n"
        "  - { name: top2, kind: process.service, process: p, lifecycle: { depends_on: [ left, "
        "long1 ] } }\n"
        "  - { name: long1, kind: process.service, process: p, lifecycle: { depends_on: [ long2 ] "
        "} }\n"
        "  - { name: long2, kind: process.service, process: p, lifecycle: { depends_on: [ bottom ] "
        "} }\n");
    assert_int_equal(level_of(r, "app:bottom"), 0);
    assert_int_equal(level_of(r, "app:left"), 1);
    assert_int_equal(level_of(r, "app:right"), 1);
    assert_int_equal(level_of(r, "app:top"), 2);
    assert_int_equal(level_of(r, "app:long2"), 1);
    assert_int_equal(level_of(r, "app:long1"), 2);
    assert_int_equal(level_of(r, "app:top2"), 3);
    assert_int_equal(r->graph.n_levels, 4);
    check_graph_invariants(r);
    sw_registry_free(r);
}

static void test_independent_services_level_zero(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p }\n"
        "  - { name: b, kind: process.service, process: p }\n"
        "  - { name: c, kind: process.service, process: p, config: { note: \"app:b is not b\" } }\n"
        "  - { name: cfg, kind: registry.entry }\n");
    assert_int_equal(r->graph.n, 3);
    assert_int_equal(r->graph.n_edges, 0);
    assert_int_equal(r->graph.n_levels, 1);
    for (size_t i = 0; i < 3; i++) assert_int_equal(r->graph.level[i], 0);
    assert_true(sw_graph_index(&r->graph, t_get(r, "app:cfg")) == (size_t)-1);
    assert_true(sw_graph_index(&r->graph, t_get(r, "app:p")) == (size_t)-1);
    check_graph_invariants(r);
    sw_registry_free(r);
}

static void test_no_services(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\nentries:\n  - { name: p, kind: process.lua, source: x }\n");
    assert_int_equal(r->graph.n, 0);
    assert_int_equal(r->graph.n_edges, 0);
    assert_int_equal(r->graph.n_levels, 0);
    assert_int_equal(r->n_services, 0);
    sw_registry_free(r);
}

/* The graph can be built again from a loaded snapshot's entries; the result is the same. */
static void test_rebuild_is_deterministic(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: cfg, kind: registry.entry, d: app:db }\n"
                    "  - { name: a, kind: process.service, process: p, config: { c: app:cfg } }\n"
                    "  - { name: db, kind: process.service, process: p }\n"
                    "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ "
                    "a, db ] } }\n");
    sw_graph g2;
    sw_arena a;
    sw_arena_init(&a);
    sw_diags d;
    sw_diags_init(&d);
    assert_int_equal(
        sw_graph_build(&g2, &a, (const sw_entry *const *)r->entries, r->n_entries, &r->ids, &d), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(g2.n, r->graph.n);
    assert_int_equal(g2.n_edges, r->graph.n_edges);
    assert_int_equal(g2.n_levels, 3);
    for (size_t i = 0; i < g2.n; i++) {
        assert_ptr_equal(g2.services[i], r->graph.services[i]);
        assert_int_equal(g2.level[i], r->graph.level[i]);
    }
    for (size_t k = 0; k < g2.n_edges; k++) {
        assert_int_equal(g2.edges[k].from, r->graph.edges[k].from);
        assert_int_equal(g2.edges[k].to, r->graph.edges[k].to);
        assert_string_equal(g2.edges[k].why, r->graph.edges[k].why);
    }
    sw_arena_free(&a);
    sw_diags_free(&d);
    sw_registry_free(r);
}

/* ---- cycles ---- */

static void test_two_cycle(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n",
        &d);
    assert_int_equal(d.n, 1);
    const sw_diag *e = &d.v[0];
    assert_string_equal(e->msg, "dependency cycle: app:a -> app:b -> app:a");
    assert_string_equal(e->file, T_FILE);
    assert_string_equal(e->entry, "app:a");
    assert_string_equal(e->field, "lifecycle.depends_on[0]");
    assert_int_equal(e->line, 4);
    assert_int_equal(e->col, 78);
    sw_diags_free(&d);
}

static void test_three_cycle(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, config: { next: app:b } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ c ] } }\n"
        "  - { name: c, kind: process.service, process: p, lifecycle: { requires: a } }\n",
        &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].msg, "dependency cycle: app:a -> app:b -> app:c -> app:a");
    assert_string_equal(d.v[0].field, "config.next");
    sw_diags_free(&d);
}

static void test_cycle_through_registry_entry(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: cfg, kind: registry.entry, peer: app:b }\n"
        "  - { name: a, kind: process.service, process: p, config: { c: app:cfg } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n",
        &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(
        d.v[0].msg, "dependency cycle: app:a -> app:b -> app:a (config.c via app:cfg field peer)");
    assert_string_equal(d.v[0].field, "config.c"); /* the field slot stays a field path */
    sw_diags_free(&d);
}

static void test_cycle_with_node_behind_reported_once(void **state)
{
    (void)state;
    /* d depends on the cycle a -> b -> a; d is not on it. Both orders of declaration. */
    const char *orders[] = {
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n"
        "  - { name: d, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n"
        "  - { name: ok, kind: process.service, process: p }\n",
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: d, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n"
        "  - { name: ok, kind: process.service, process: p }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n",
    };
    for (size_t i = 0; i < 2; i++) {
        sw_diags d;
        t_must_fail(orders[i], &d);
        if (d.n != 1) t_print_diags(&d);
        assert_int_equal(d.n, 1);
        assert_string_equal(d.v[0].msg, "dependency cycle: app:a -> app:b -> app:a");
        assert_string_equal(d.v[0].entry, "app:a");
        sw_diags_free(&d);
    }
}

static void test_two_separate_cycles_both_reported(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ c ] } }\n"
        "  - { name: c, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n"
        "  - { name: x, kind: process.service, process: p, lifecycle: { depends_on: [ y ] } }\n"
        "  - { name: y, kind: process.service, process: p, lifecycle: { depends_on: [ x ] } }\n"
        "  - { name: s, kind: process.service, process: p, lifecycle: { depends_on: [ s ] } }\n",
        &d);
    assert_int_equal(d.n, 3);
    assert_string_equal(d.v[0].msg, "dependency cycle: app:a -> app:b -> app:c -> app:a");
    assert_string_equal(d.v[1].msg, "dependency cycle: app:x -> app:y -> app:x");
    assert_string_equal(d.v[2].msg, "dependency cycle: app:s -> app:s");
    sw_diags_free(&d);
}

static void test_cycles_sharing_a_node_reported(void **state)
{
    (void)state;
    /* a -> b -> a and a -> c -> a: at least one reported, never the same one twice */
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: a, kind: process.service, process: p, lifecycle: { depends_on: [ b, c ] } }\n"
        "  - { name: b, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n"
        "  - { name: c, kind: process.service, process: p, lifecycle: { depends_on: [ a ] } }\n",
        &d);
    assert_true(d.n >= 1);
    assert_int_equal(t_count_diags(&d, "dependency cycle: app:a -> app:b -> app:a"), 1);
    sw_diags_free(&d);
}

/* Regression (was a bug): registry/graph.c find_cycles follows only the first not-yet-finished dependency of each
 * service and marks the whole walk finished when it dead-ends. Here the walk from x goes to y,
 * whose only dependency (p, on the already reported cycle p <-> q) is finished, so x and y are
 * marked finished and the cycle x -> z -> x is never reported (z's walk reaches finished x).
 * `check` then shows one cycle of two; fixing it reveals the other. Correct: both reported. */
static void test_cycle_behind_a_dead_end_reported(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: l, kind: process.lua, source: x }\n"
        "  - { name: p, kind: process.service, process: l, lifecycle: { depends_on: [ q ] } }\n"
        "  - { name: q, kind: process.service, process: l, lifecycle: { depends_on: [ p ] } }\n"
        "  - { name: x, kind: process.service, process: l, lifecycle: { depends_on: [ y, z ] } }\n"
        "  - { name: y, kind: process.service, process: l, lifecycle: { depends_on: [ p ] } }\n"
        "  - { name: z, kind: process.service, process: l, lifecycle: { depends_on: [ x ] } }\n",
        &d);
    assert_int_equal(t_count_diags(&d, "dependency cycle: app:p -> app:q -> app:p"), 1);
    assert_int_equal(t_count_diags(&d, "dependency cycle: app:x -> app:z -> app:x"), 1);
    assert_int_equal(d.n, 2);
    sw_diags_free(&d);
}

/* ---- size ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t next_rand(rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}

/* n services in a random DAG: service i may depend only on services with a higher index, and
 * is declared in shuffled order, through depends_on or a config string. */
static char *random_dag(size_t n, uint64_t seed, size_t *n_edges)
{
    rng r = {seed};
    size_t *order = malloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = next_rand(&r) % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    text t;
    start_app(&t);
    *n_edges = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        size_t deps[4], nd = 0;
        size_t want = i + 1 < n ? next_rand(&r) % 5 : 0;
        for (size_t m = 0; m < want && m < 4; m++) {
            size_t to = i + 1 + next_rand(&r) % (n - i - 1 < 50 ? n - i - 1 : 50);
            bool dup = false;
            for (size_t q = 0; q < nd; q++) dup |= deps[q] == to;
            if (!dup) deps[nd++] = to;
        }
        *n_edges += nd;
        put(&t, "  - { name: s%zu, kind: process.service, process: p", i);
        if (nd && next_rand(&r) % 2) {
            put(&t, ", lifecycle: { depends_on: [");
            for (size_t q = 0; q < nd; q++) put(&t, "%s s%zu", q ? "," : "", deps[q]);
            put(&t, " ] }");
        } else if (nd) {
            put(&t, ", config: { deps: [");
            for (size_t q = 0; q < nd; q++) put(&t, "%s \"app:s%zu\"", q ? "," : "", deps[q]);
            put(&t, " ] }");
        }
        put(&t, " }\n");
    }
    free(order);
    return t.s;
}

static void test_random_dag_2000(void **state)
{
    (void)state;
    size_t expected_edges = 0;
    char *yaml = random_dag(2000, 42, &expected_edges);
    clock_t t0 = clock();
    sw_registry *r = t_must_load(yaml);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    assert_int_equal(r->n_services, 2000);
    assert_int_equal(r->graph.n_edges, expected_edges);
    assert_true(expected_edges > 2000);
    check_graph_invariants(r);
    /* the last service depends on nothing; chains make the graph deep */
    assert_int_equal(level_of(r, "app:s1999"), 0);
    assert_true(r->graph.n_levels > 20);
    assert_true(secs < 5.0);
    sw_registry_free(r);
    free(yaml);
}

static void test_random_dags_other_seeds(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        size_t expected_edges = 0;
        char *yaml = random_dag(300, seed, &expected_edges);
        sw_registry *r = t_must_load(yaml);
        assert_int_equal(r->graph.n_edges, expected_edges);
        check_graph_invariants(r);
        sw_registry_free(r);
        free(yaml);
    }
}

static void test_random_dag_with_planted_cycle(void **state)
{
    (void)state;
    size_t expected_edges = 0;
    char *yaml = random_dag(2000, 7, &expected_edges);
    /* plant a 3-cycle that also depends on the DAG, and a service behind it */
    text t = {yaml, strlen(yaml), strlen(yaml) + 1};
    put(&t, "  - { name: c1, kind: process.service, process: p, lifecycle: { depends_on: [ c2, s5 "
            "] } }\n");
    put(&t,
        "  - { name: c2, kind: process.service, process: p, lifecycle: { depends_on: [ c3 ] } }\n");
    put(&t,
        "  - { name: c3, kind: process.service, process: p, lifecycle: { depends_on: [ c1 ] } }\n");
    put(&t, "  - { name: s_behind, kind: process.service, process: p, lifecycle: { depends_on: [ "
            "c3, s0 ] } }\n");
    sw_diags d;
    t_must_fail(t.s, &d);
    if (d.n != 1) t_print_diags(&d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].msg, "dependency cycle: app:c1 -> app:c2 -> app:c3 -> app:c1");
    sw_diags_free(&d);
    free(t.s);
}

static void test_long_chain(void **state)
{
    (void)state;
    /* s0 -> s1 -> ... -> s1999, declared bottom first */
    text t;
    start_app(&t);
    for (size_t i = 2000; i-- > 0;) {
        if (i == 1999) put(&t, "  - { name: s%zu, kind: process.service, process: p }\n", i);
        else
            put(&t,
                "  - { name: s%zu, kind: process.service, process: p, lifecycle: { depends_on: [ "
                "s%zu ] } }\n",
                i, i + 1);
    }
    sw_registry *r = t_must_load(t.s);
    assert_int_equal(r->graph.n_levels, 2000);
    assert_int_equal(level_of(r, "app:s0"), 1999);
    assert_int_equal(level_of(r, "app:s1999"), 0);
    check_graph_invariants(r);
    sw_registry_free(r);
    free(t.s);
}

static void test_long_registry_entry_chain(void **state)
{
    (void)state;
    /* s -> c0 -> c1 -> ... -> c1999 -> db: transitive through 2000 registry.entry entries */
    text t;
    start_app(&t);
    put(&t, "  - { name: db, kind: process.service, process: p }\n");
    put(&t, "  - { name: s, kind: process.service, process: p, config: { first: app:c0 } }\n");
    for (size_t i = 0; i < 2000; i++) {
        if (i == 1999) put(&t, "  - { name: c%zu, kind: registry.entry, next: app:db }\n", i);
        else put(&t, "  - { name: c%zu, kind: registry.entry, next: app:c%zu }\n", i, i + 1);
    }
    sw_registry *r = t_must_load(t.s);
    assert_int_equal(r->graph.n_edges, 1);
    assert_int_equal(level_of(r, "app:s"), 1);
    assert_non_null(
        strstr(r->graph.edges[0].why, "config.first via app:c0 field next via app:c1 field next"));
    sw_registry_free(r);
    free(t.s);
}

/* Regression (was a bug): registry/graph.c entry_reach -> collect -> scan_node -> expand -> entry_reach recurses
 * once per registry.entry (or library.lua import) in a reference chain, with several frames and a
 * 512-byte path buffer per level: a chain of ~10,000 registry.entry entries overflows the stack
 * and `steward check` dies with SIGSEGV (fewer under ASan). Correct: a result or an error,
 * never a crash. Runs in a child process with a time limit. */
static void test_very_long_registry_entry_chain_does_not_crash(void **state)
{
    (void)state;
    text t;
    start_app(&t);
    put(&t, "  - { name: db, kind: process.service, process: p }\n");
    put(&t, "  - { name: s, kind: process.service, process: p, config: { first: app:c0 } }\n");
    const size_t n = 30000;
    for (size_t i = 0; i < n; i++) {
        if (i == n - 1) put(&t, "  - { name: c%zu, kind: registry.entry, next: app:db }\n", i);
        else put(&t, "  - { name: c%zu, kind: registry.entry, next: app:c%zu }\n", i, i + 1);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60);
        sw_diags d;
        sw_registry *r = t_load(t.s, &d);
        _exit(r && r->graph.n_edges == 1 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    free(t.s);
    if (WIFSIGNALED(status)) fail_msg("loading died with signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_levels),
        cmocka_unit_test(test_diamond_levels),
        cmocka_unit_test(test_independent_services_level_zero),
        cmocka_unit_test(test_no_services),
        cmocka_unit_test(test_rebuild_is_deterministic),
        cmocka_unit_test(test_two_cycle),
        cmocka_unit_test(test_three_cycle),
        cmocka_unit_test(test_cycle_through_registry_entry),
        cmocka_unit_test(test_cycle_with_node_behind_reported_once),
        cmocka_unit_test(test_two_separate_cycles_both_reported),
        cmocka_unit_test(test_cycles_sharing_a_node_reported),
        cmocka_unit_test(test_cycle_behind_a_dead_end_reported),
        cmocka_unit_test(test_random_dag_2000),
        cmocka_unit_test(test_random_dags_other_seeds),
        cmocka_unit_test(test_random_dag_with_planted_cycle),
        cmocka_unit_test(test_long_chain),
        cmocka_unit_test(test_long_registry_entry_chain),
        cmocka_unit_test(test_very_long_registry_entry_chain_does_not_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
