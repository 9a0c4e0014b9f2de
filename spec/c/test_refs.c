/* Unit tests for reference extraction (registry/graph.c, docs/registry.md "Dependencies") through the
 * loader: what a service depends on, and the field path each edge records. Relative references,
 * ids found deep in config, transitive references through registry.entry / process.lua /
 * library.lua, groups standing for their members, and what is never ordered. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "registry.h"
#include "registry_helpers.h"

/* The edge from -> to, or NULL. */
static const sw_edge *find_edge(const sw_registry *r, const char *from, const char *to)
{
    const sw_graph *g = &r->graph;
    size_t f = sw_graph_index(g, t_get(r, from)), t = sw_graph_index(g, t_get(r, to));
    assert_true(f != (size_t)-1 && t != (size_t)-1);
    for (size_t k = g->deps[f]; k < g->deps[f + 1]; k++) {
        assert_true(g->edges[k].from == f);
        if (g->edges[k].to == t) return &g->edges[k];
    }
    return NULL;
}

static void print_edges(const sw_registry *r)
{
    const sw_graph *g = &r->graph;
    for (size_t k = 0; k < g->n_edges; k++)
        print_message("  edge %s -> %s (%s)\n", g->services[g->edges[k].from]->id,
                      g->services[g->edges[k].to]->id, g->edges[k].why);
}

/* Asserts the edge exists and, when why is given, that it came from that field path. */
static const sw_edge *need_edge(const sw_registry *r, const char *from, const char *to,
                                const char *why)
{
    const sw_edge *e = find_edge(r, from, to);
    if (!e) {
        print_edges(r);
        fail_msg("no edge %s -> %s", from, to);
    }
    if (why && strcmp(e->why, why) != 0)
        fail_msg("edge %s -> %s: why \"%s\", expected \"%s\"", from, to, e->why, why);
    return e;
}

static void no_edge(const sw_registry *r, const char *from, const char *to)
{
    const sw_edge *e = find_edge(r, from, to);
    if (e) {
        print_edges(r);
        fail_msg("unexpected edge %s -> %s (%s)", from, to, e->why);
    }
}

static size_t out_degree(const sw_registry *r, const char *from)
{
    size_t f = sw_graph_index(&r->graph, t_get(r, from));
    return r->graph.deps[f + 1] - r->graph.deps[f];
}

/* ---- relative references ---- */

static void test_relative_references(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml"};
    const char *texts[] = {
        "namespace: app.db\n"
        "entries:\n"
        "  - { name: worker, kind: process.lua, source: x }\n"
        "  - { name: main, kind: process.service, process: worker }\n",
        "namespace: app.web\n"
        "entries:\n"
        "  - { name: worker, kind: process.lua, source: x, imports: { u: util } }\n"
        "  - { name: util, kind: library.lua, source: x }\n"
        "  - { name: h, kind: process.host }\n"
        "  - { name: local, kind: process.service, process: worker }\n"
        "  - name: web\n"
        "    kind: process.service\n"
        "    process: worker\n"
        "    host: h\n"
        "    lifecycle: { depends_on: [ local, app.db:main ] }\n"
        "  - { name: g, kind: service.group, children: [ web ] }\n",
    };
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 2, &d);
    if (!r) t_print_diags(&d);
    assert_non_null(r);
    const sw_service *web = &t_get(r, "app.web:web")->as.service;
    assert_string_equal(web->process.id, "app.web:worker");
    assert_ptr_equal(web->process.target, t_get(r, "app.web:worker"));
    assert_string_equal(web->host.id, "app.web:h");
    assert_string_equal(web->lifecycle.depends_on.v[0].id, "app.web:local");
    assert_string_equal(web->lifecycle.depends_on.v[1].id, "app.db:main");
    assert_string_equal(t_get(r, "app.web:g")->as.group.children.v[0].id, "app.web:web");
    assert_string_equal(t_get(r, "app.web:worker")->as.process_lua.imports.v[0].library.id,
                        "app.web:util");
    /* same name, other namespace: each service uses its own worker */
    assert_ptr_equal(t_get(r, "app.db:main")->as.service.process.target, t_get(r, "app.db:worker"));
    need_edge(r, "app.web:web", "app.web:local", "lifecycle.depends_on[0]");
    need_edge(r, "app.web:web", "app.db:main", "lifecycle.depends_on[1]");
    assert_int_equal(out_degree(r, "app.web:web"), 2);
    sw_registry_free(r);
    sw_diags_free(&d);
}

/* ---- ids anywhere in config ---- */

static void test_id_deep_in_config(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: db, kind: process.service, process: p }\n"
                                 "  - { name: cache, kind: process.service, process: p }\n"
                                 "  - { name: queue, kind: process.service, process: p }\n"
                                 "  - name: s\n"
                                 "    kind: process.service\n"
                                 "    process: p\n"
                                 "    input: [ x, \"app:queue\" ]\n"
                                 "    config:\n"
                                 "      a:\n"
                                 "        b: [ 1, two, app:db ]\n"
                                 "      database: app:cache\n");
    const sw_edge *e = need_edge(r, "app:s", "app:db", "config.a.b[2]");
    assert_non_null(e->at);
    assert_int_equal(e->at->line, 13);
    assert_int_equal(e->at->col, 22);
    assert_string_equal(e->at->str, "app:db");
    need_edge(r, "app:s", "app:cache", "config.database");
    need_edge(r, "app:s", "app:queue", "input[1]");
    assert_int_equal(out_degree(r, "app:s"), 3);
    sw_registry_free(r);
}

static void test_config_top_level_list_and_scalar(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: db, kind: process.service, process: p }\n"
                    "  - { name: c, kind: process.service, process: p }\n"
                    "  - { name: s1, kind: process.service, process: p, config: app:db }\n"
                    "  - { name: s2, kind: process.service, process: p, config: [ [ app:c ] ] }\n");
    need_edge(r, "app:s1", "app:db", "config");
    need_edge(r, "app:s2", "app:c", "config[0][0]");
    sw_registry_free(r);
}

static void test_non_ids_are_not_references(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: db, kind: process.service, process: p }\n"
                    "  - name: s\n"
                    "    kind: process.service\n"
                    "    process: p\n"
                    "    config:\n"
                    "      missing: app:nothing\n" /* looks like an id, names nothing */
                    "      prefix: \"app:db \"\n"  /* not equal */
                    "      upper: APP:DB\n"
                    "      url: \"postgres://app:db@host\"\n"
                    "      bare: db\n" /* no colon: never a reference in config */
                    "      list: [ db, s, p ]\n"
                    "      num: 5\n"
                    "      flag: true\n");
    no_edge(r, "app:s", "app:db");
    assert_int_equal(out_degree(r, "app:s"), 0);
    assert_int_equal(r->graph.n_edges, 0);
    sw_registry_free(r);
}

static void test_ids_of_unordered_kinds_create_no_edge(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: h, kind: process.host }\n"
                                 "  - { name: pol, kind: security.policy, policy: { actions: "
                                 "\"*\", resources: \"*\", effect: allow } }\n"
                                 "  - { name: db, kind: process.service, process: p, host: h }\n"
                                 "  - { name: s, kind: process.service, process: p, host: app:h, "
                                 "config: { h: app:h, pol: app:pol, p: app:p } }\n");
    assert_int_equal(r->graph.n_edges, 0);
    sw_registry_free(r);
}

/* ---- transitive references ---- */

static void test_transitive_through_registry_entries(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: db, kind: process.service, process: p }\n"
        "  - { name: cfg1, kind: registry.entry, next: app:cfg2 }\n"
        "  - { name: cfg2, kind: registry.entry, deep: { list: [ x, { svc: app:db } ] } }\n"
        "  - { name: s, kind: process.service, process: p, config: { settings: app:cfg1 } }\n"
        "  - { name: t, kind: process.service, process: p, lifecycle: { depends_on: [ cfg2 ] } "
        "}\n");
    need_edge(r, "app:s", "app:db",
              "config.settings via app:cfg1 field next via app:cfg2 field deep.list[1].svc");
    need_edge(r, "app:t", "app:db", "lifecycle.depends_on[0] via app:cfg2 field deep.list[1].svc");
    assert_int_equal(out_degree(r, "app:s"), 1);
    assert_int_equal(r->graph.level[sw_graph_index(&r->graph, t_get(r, "app:s"))], 1);
    sw_registry_free(r);
}

/* docs/registry.md rule 3 names process.lua and library.lua as entries whose references count, but
 * neither kind has a field that can hold a service id: inline source is not scanned, imports
 * only name library.lua entries and unknown fields are refused. So a process.lua -> imports ->
 * library.lua chain is followed (without error) and orders nothing. See the report. */
static void test_lua_imports_chain_orders_nothing(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: lib2, kind: library.lua, source: \"return 'app:db'\" }\n"
        "  - { name: lib1, kind: library.lua, source: x, imports: { two: lib2 } }\n"
        "  - { name: worker, kind: process.lua, source: x, imports: { one: lib1 } }\n"
        "  - { name: plain, kind: process.lua, source: x }\n"
        "  - { name: db, kind: process.service, process: plain }\n"
        "  - { name: s, kind: process.service, process: worker }\n"
        "  - { name: t, kind: process.service, process: plain, config: { job: app:worker } }\n");
    /* inline source is never scanned: 'app:db' inside lib2's code orders nothing */
    no_edge(r, "app:s", "app:db");
    no_edge(r, "app:t", "app:db");
    assert_int_equal(r->graph.n_edges, 0);
    sw_registry_free(r);
}

static void test_import_loop_does_not_hang(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: a, kind: library.lua, source: x, imports: { b: b } }\n"
                    "  - { name: b, kind: library.lua, source: x, imports: { a: a } }\n"
                    "  - { name: w, kind: process.lua, source: x, imports: { a: a } }\n"
                    "  - { name: s, kind: process.service, process: w }\n");
    assert_int_equal(r->graph.n_edges, 0);
    sw_registry_free(r);
}

static void test_reference_loop_among_entries_does_not_hang(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: db, kind: process.service, process: p }\n"
        "  - { name: c1, kind: registry.entry, next: app:c2, svc: app:db }\n"
        "  - { name: c2, kind: registry.entry, next: app:c3 }\n"
        "  - { name: c3, kind: registry.entry, back: app:c1, self: app:c3 }\n"
        "  - { name: s, kind: process.service, process: p, config: { start: app:c1 } }\n");
    need_edge(r, "app:s", "app:db", "config.start via app:c1 field svc");
    assert_int_equal(out_degree(r, "app:s"), 1);
    sw_registry_free(r);
}

/* Every service that reaches a registry.entry in a reference loop gets what the whole loop
 * references, whichever service is looked at first. */
static void test_loop_members_all_lead_to_service_entered_first(void **state)
{
    (void)state;
    /* s0 (scanned first) enters the loop at cfg1, which itself references db */
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: db, kind: process.service, process: p }\n"
                    "  - { name: s0, kind: process.service, process: p, config: { c: app:cfg2 } }\n"
                    "  - { name: s1, kind: process.service, process: p, config: { c: app:cfg1 } }\n"
                    "  - { name: cfg1, kind: registry.entry, a: app:cfg2, b: app:db }\n"
                    "  - { name: cfg2, kind: registry.entry, a: app:cfg1 }\n");
    need_edge(r, "app:s0", "app:db", NULL);
    need_edge(r, "app:s1", "app:db", NULL);
    sw_registry_free(r);
}

/* Regression (was a bug): registry/graph.c entry_reach memoizes a registry.entry whose computation was cut short by
 * a reference loop: while cfg1 is being computed, cfg2 is computed, sees cfg1 "in progress",
 * treats it as empty and is then cached as final without cfg1's references. A service scanned
 * later that reaches the loop through cfg2 misses the dependency: here s1 (config -> cfg2 ->
 * cfg1 -> db) gets no edge to db, so it may start before db. Depends on entry order (s0 is
 * scanned first and enters at cfg1). Correct: both s0 and s1 depend on db. */
static void test_loop_entered_elsewhere_keeps_transitive_deps(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: db, kind: process.service, process: p }\n"
                    "  - { name: s0, kind: process.service, process: p, config: { c: app:cfg1 } }\n"
                    "  - { name: s1, kind: process.service, process: p, config: { c: app:cfg2 } }\n"
                    "  - { name: cfg1, kind: registry.entry, a: app:cfg2, b: app:db }\n"
                    "  - { name: cfg2, kind: registry.entry, a: app:cfg1 }\n");
    need_edge(r, "app:s0", "app:db", "config.c via app:cfg1 field b");
    need_edge(r, "app:s1", "app:db", "config.c via app:cfg2 field a via app:cfg1 field b");
    sw_registry_free(r);
}

static void test_service_to_service_reference_is_not_transitive(void **state)
{
    (void)state;
    /* a referenced service is a dependency itself; its own dependencies are its business */
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: db, kind: process.service, process: p }\n"
        "  - { name: api, kind: process.service, process: p, config: { d: app:db } }\n"
        "  - { name: web, kind: process.service, process: p, config: { a: app:api } }\n");
    need_edge(r, "app:web", "app:api", "config.a");
    no_edge(r, "app:web", "app:db");
    const sw_graph *g = &r->graph;
    assert_int_equal(g->level[sw_graph_index(g, t_get(r, "app:db"))], 0);
    assert_int_equal(g->level[sw_graph_index(g, t_get(r, "app:api"))], 1);
    assert_int_equal(g->level[sw_graph_index(g, t_get(r, "app:web"))], 2);
    sw_registry_free(r);
}

/* ---- groups ---- */

static void test_group_reference_expands_to_members(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: m1, kind: process.service, process: p }\n"
                    "  - { name: m2, kind: process.service, process: p }\n"
                    "  - { name: i1, kind: process.service, process: p }\n"
                    "  - { name: inner, kind: service.group, children: [ i1 ] }\n"
                    "  - { name: g, kind: service.group, children: [ m1, m2, inner ] }\n"
                    "  - { name: u, kind: process.service, process: p, config: { grp: app:g } }\n"
                    "  - { name: v, kind: process.service, process: p, lifecycle: { depends_on: [ "
                    "inner ] } }\n");
    need_edge(r, "app:u", "app:m1", "config.grp via group app:g");
    need_edge(r, "app:u", "app:m2", "config.grp via group app:g");
    need_edge(r, "app:u", "app:i1", "config.grp via group app:g via group app:inner");
    assert_int_equal(out_degree(r, "app:u"), 3);
    need_edge(r, "app:v", "app:i1", "lifecycle.depends_on[0] via group app:inner");
    assert_int_equal(out_degree(r, "app:v"), 1);
    sw_registry_free(r);
}

static void test_group_depends_on_applies_to_children(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: db, kind: process.service, process: p }\n"
                                 "  - { name: cache, kind: process.service, process: p }\n"
                                 "  - { name: i1, kind: process.service, process: p }\n"
                                 "  - { name: o1, kind: process.service, process: p }\n"
                                 "  - { name: inner, kind: service.group, children: [ i1 ], "
                                 "lifecycle: { depends_on: [ cache ] } }\n"
                                 "  - { name: outer, kind: service.group, children: [ o1, inner ], "
                                 "lifecycle: { depends_on: db } }\n");
    need_edge(r, "app:o1", "app:db", "group app:outer lifecycle.depends_on[0]");
    need_edge(r, "app:i1", "app:cache", "group app:inner lifecycle.depends_on[0]");
    need_edge(r, "app:i1", "app:db", "group app:outer lifecycle.depends_on[0]");
    no_edge(r, "app:o1", "app:cache");
    no_edge(r, "app:db", "app:o1");
    const sw_graph *g = &r->graph;
    assert_int_equal(g->level[sw_graph_index(g, t_get(r, "app:i1"))], 1);
    sw_registry_free(r);
}

/* A service referencing its own group depends on its siblings, never on itself. */
static void test_member_referencing_own_group(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: a, kind: process.service, process: p }\n"
                    "  - { name: b, kind: process.service, process: p, config: { team: app:g } }\n"
                    "  - { name: g, kind: service.group, children: [ a, b ] }\n");
    need_edge(r, "app:b", "app:a", "config.team via group app:g");
    assert_int_equal(out_degree(r, "app:b"), 1);
    sw_registry_free(r);
}

/* Runs sw_registry_load_files on yaml in a child process with a time limit; returns the child's
 * wait status. Used where a bug made loading hang or blow the stack. */
static int load_in_child(const char *yaml, unsigned seconds, size_t *n_diags)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        alarm(seconds);
        sw_diags d;
        sw_registry *r = t_load(yaml, &d);
        sw_diags_finish(&d);
        size_t n = r ? 0 : d.n;
        if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n) _exit(3);
        _exit(r ? 1 : 0);
    }
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    *n_diags = (size_t)-1;
    if (read(fds[0], n_diags, sizeof *n_diags) != (ssize_t)sizeof *n_diags) *n_diags = (size_t)-1;
    close(fds[0]);
    return status;
}

/* Regression (found at d0aa34c, fixed in the working tree while these tests were written):
 * graph.c expand recursed into a group's children with no guard, and the graph is built even
 * after check_groups reports "group contains itself"; a self-containing group that a service
 * references recursed without end (out of memory, or stack overflow). Must fail promptly with
 * the group error. Runs in a child process with a time limit. */
static void test_self_containing_group_referenced_fails_cleanly(void **state)
{
    (void)state;
    size_t n = 0;
    int status = load_in_child(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: s, kind: process.service, process: p, lifecycle: { depends_on: [ g ] } }\n"
        "  - { name: g, kind: service.group, children: [ g ] }\n",
        10, &n);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(n >= 1);
}

/* Regression (found at d0aa34c, fixed in the working tree): when two groups list each other
 * (g1 -> g2 -> g1) check_groups reported the error but left the parent pointers in a loop, and
 * graph.c collect's `for (g = e->parent; g; g = g->parent)` looped forever for a service inside
 * them: `steward check` hung. Must fail promptly. Runs in a child process with a time limit. */
static void test_group_cycle_with_member_fails_cleanly(void **state)
{
    (void)state;
    size_t n = 0;
    int status = load_in_child("namespace: app\n"
                               "entries:\n"
                               "  - { name: p, kind: process.lua, source: x }\n"
                               "  - { name: s, kind: process.service, process: p }\n"
                               "  - { name: g1, kind: service.group, children: [ s, g2 ] }\n"
                               "  - { name: g2, kind: service.group, children: [ g1 ] }\n",
                               10, &n);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(n >= 1);
}

/* A group cycle that no service touches is reported as an error. */
static void test_group_cycle_without_members_reported(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: g1, kind: service.group, children: [ g2 ] }\n"
                "  - { name: g2, kind: service.group, children: [ g1 ] }\n",
                &d);
    assert_true(t_count_diags(&d, "group contains itself") >= 1);
    sw_diags_free(&d);
}

/* ---- what is not ordered ---- */

static void test_meta_and_security_not_ordered(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "meta: { owner: app:db }\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: db, kind: process.service, process: p }\n"
                                 "  - { name: pol, kind: security.policy, policy: { actions: "
                                 "\"*\", resources: \"*\", effect: allow }, groups: [ ops ] }\n"
                                 "  - { name: cfg, kind: registry.entry, meta: { uses: app:db } }\n"
                                 "  - name: s\n"
                                 "    kind: process.service\n"
                                 "    process: p\n"
                                 "    meta: { needs: app:db, list: [ app:db ] }\n"
                                 "    config: { c: app:cfg }\n"
                                 "    lifecycle:\n"
                                 "      security:\n"
                                 "        actor: { id: app:db, meta: { peer: app:db } }\n"
                                 "        groups: [ ops ]\n"
                                 "        policies: [ pol ]\n");
    no_edge(r, "app:s", "app:db");
    assert_int_equal(r->graph.n_edges, 0);
    assert_true(t_get(r, "app:s")->as.service.lifecycle.security.present);
    sw_registry_free(r);
}

static void test_implicit_self_reference_ignored(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: back, kind: registry.entry, svc: app:s }\n"
                                 "  - { name: s, kind: process.service, process: p, input: [ app:s "
                                 "], config: { me: app:s, via: app:back } }\n");
    assert_int_equal(out_degree(r, "app:s"), 0);
    assert_int_equal(r->graph.level[sw_graph_index(&r->graph, t_get(r, "app:s"))], 0);
    sw_registry_free(r);
}

static void test_explicit_self_dependency_is_a_cycle(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x }\n"
        "  - { name: s, kind: process.service, process: p, lifecycle: { depends_on: [ s ] } }\n",
        &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].msg, "dependency cycle: app:s -> app:s");
    assert_string_equal(d.v[0].entry, "app:s");
    assert_string_equal(d.v[0].field, "lifecycle.depends_on[0]");
    sw_diags_free(&d);
}

static void test_duplicate_references_one_edge(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: x }\n"
                                 "  - { name: db, kind: process.service, process: p }\n"
                                 "  - { name: cfg, kind: registry.entry, d: app:db }\n"
                                 "  - name: s\n"
                                 "    kind: process.service\n"
                                 "    process: p\n"
                                 "    config: { a: app:db, b: [ app:db, app:db ], c: app:cfg }\n"
                                 "    lifecycle: { depends_on: [ db, app:db ] }\n");
    assert_int_equal(out_degree(r, "app:s"), 1);
    /* the explicit dependency is the one recorded */
    need_edge(r, "app:s", "app:db", "lifecycle.depends_on[0]");
    sw_registry_free(r);
}

static void test_depends_on_unknown_id_is_an_error(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: x }\n"
                "  - { name: h, kind: process.host }\n"
                "  - { name: s, kind: process.service, process: p, lifecycle: { depends_on: [ "
                "nope, other:x, h ] } }\n",
                &d);
    assert_int_equal(d.n, 3);
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.depends_on[0]"), "app:nope");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.depends_on[1]"), "other:x");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.depends_on[2]"), "process.host");
    sw_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relative_references),
        cmocka_unit_test(test_id_deep_in_config),
        cmocka_unit_test(test_config_top_level_list_and_scalar),
        cmocka_unit_test(test_non_ids_are_not_references),
        cmocka_unit_test(test_ids_of_unordered_kinds_create_no_edge),
        cmocka_unit_test(test_transitive_through_registry_entries),
        cmocka_unit_test(test_lua_imports_chain_orders_nothing),
        cmocka_unit_test(test_import_loop_does_not_hang),
        cmocka_unit_test(test_reference_loop_among_entries_does_not_hang),
        cmocka_unit_test(test_loop_members_all_lead_to_service_entered_first),
        cmocka_unit_test(test_loop_entered_elsewhere_keeps_transitive_deps),
        cmocka_unit_test(test_service_to_service_reference_is_not_transitive),
        cmocka_unit_test(test_group_reference_expands_to_members),
        cmocka_unit_test(test_group_depends_on_applies_to_children),
        cmocka_unit_test(test_member_referencing_own_group),
        cmocka_unit_test(test_self_containing_group_referenced_fails_cleanly),
        cmocka_unit_test(test_group_cycle_with_member_fails_cleanly),
        cmocka_unit_test(test_group_cycle_without_members_reported),
        cmocka_unit_test(test_meta_and_security_not_ordered),
        cmocka_unit_test(test_implicit_self_reference_ignored),
        cmocka_unit_test(test_explicit_self_dependency_is_a_cycle),
        cmocka_unit_test(test_duplicate_references_one_edge),
        cmocka_unit_test(test_depends_on_unknown_id_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
