/* Unit tests for the kind schemas (registry/schema.c, kinds.c, policy.c) through the loader:
 * registries loaded from memory, typed values and defaults of every kind (docs/registry.md, docs/supervision.md, docs/security.md),
 * explicit zeros, file meta, security policies, and the diagnostics: each names file, line,
 * column, entry and field, and every error is reported, not only the first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "registry.h"
#include "registry_helpers.h"
#include "units.h"

#define MS SW_NS_PER_MS
#define S  SW_NS_PER_S

static const char *meta_str(const sw_node *meta, const char *key)
{
    const sw_node *v = sw_node_get(meta, key);
    return v && v->type == SW_NODE_SCALAR ? v->str : NULL;
}

/* ---- process.service ---- */

static void test_service_lifecycle_defaults(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                                 "  - { name: s, kind: process.service, process: p }\n");
    assert_int_equal(r->n_files, 1);
    assert_int_equal(r->n_entries, 2);
    assert_int_equal(r->n_services, 1);
    const sw_entry *e = t_get(r, "app:s");
    assert_int_equal(e->kind, SW_KIND_SERVICE);
    assert_string_equal(e->id, "app:s");
    assert_string_equal(e->ns, "app");
    assert_string_equal(e->name, "s");
    assert_string_equal(e->file, T_FILE);
    assert_string_equal(e->dir, T_ROOT);
    assert_int_equal(e->line, 4);
    assert_int_equal(e->col, 5);
    assert_null(e->parent);
    assert_null(e->meta);
    const sw_service *s = &e->as.service;
    assert_string_equal(s->process.id, "app:p");
    assert_ptr_equal(s->process.target, t_get(r, "app:p"));
    assert_null(s->host.id);
    assert_null(s->input);
    assert_null(s->config);
    const sw_lifecycle *lc = &s->lifecycle;
    assert_false(lc->auto_start);
    assert_int_equal(lc->start_timeout_ns, 10 * S);
    assert_int_equal(lc->stop_timeout_ns, 10 * S);
    assert_int_equal(lc->stable_threshold_ns, 5 * S);
    assert_int_equal(lc->ready, SW_READY_SPAWN);
    assert_int_equal(lc->depends_on.n, 0);
    assert_int_equal(lc->restart.policy, SW_RESTART_ON_FAILURE);
    assert_int_equal(lc->restart.initial_delay_ns, 1 * S);
    assert_int_equal(lc->restart.max_delay_ns, 90 * S);
    assert_true(lc->restart.backoff_factor == 2.0);
    assert_true(lc->restart.jitter == 0.1);
    assert_int_equal(lc->restart.max_attempts, 0);
    assert_false(lc->security.present);
    assert_null(lc->security.actor_id);
    sw_registry_free(r);
}

static void test_service_lifecycle_explicit(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                                 "  - { name: h, kind: process.host, workers: 4 }\n"
                                 "  - { name: db, kind: process.service, process: app:p }\n"
                                 "  - name: s\n"
                                 "    kind: process.service\n"
                                 "    process: p\n"
                                 "    host: h\n"
                                 "    input: [ queue-a, 2, { k: v } ]\n"
                                 "    config: { database: app:db, n: 3 }\n"
                                 "    lifecycle:\n"
                                 "      auto_start: true\n"
                                 "      start_timeout: 30s\n"
                                 "      stop_timeout: 2\n"
                                 "      stable_threshold: 1.5\n"
                                 "      ready: notify\n"
                                 "      depends_on: [ db ]\n"
                                 "      restart:\n"
                                 "        policy: always\n"
                                 "        initial_delay: 250ms\n"
                                 "        max_delay: \"2m\"\n"
                                 "        backoff_factor: 1.5\n"
                                 "        jitter: 0.25\n"
                                 "        max_attempts: 7\n");
    const sw_service *s = &t_get(r, "app:s")->as.service;
    assert_string_equal(s->host.id, "app:h");
    assert_ptr_equal(s->host.target, t_get(r, "app:h"));
    assert_int_equal(t_get(r, "app:h")->as.host.workers, 4);
    assert_non_null(s->input);
    assert_int_equal(s->input->type, SW_NODE_SEQ);
    assert_int_equal(s->input->n, 3);
    assert_string_equal(s->input->kids[0]->str, "queue-a");
    assert_non_null(s->config);
    assert_string_equal(meta_str(s->config, "database"), "app:db");
    const sw_lifecycle *lc = &s->lifecycle;
    assert_true(lc->auto_start);
    assert_int_equal(lc->start_timeout_ns, 30 * S);
    assert_int_equal(lc->stop_timeout_ns, 2 * S);
    assert_int_equal(lc->stable_threshold_ns, 1500 * MS);
    assert_int_equal(lc->ready, SW_READY_NOTIFY);
    assert_int_equal(lc->depends_on.n, 1);
    assert_string_equal(lc->depends_on.v[0].id, "app:db");
    assert_ptr_equal(lc->depends_on.v[0].target, t_get(r, "app:db"));
    assert_int_equal(lc->depends_on.v[0].node->line, 18);
    assert_int_equal(lc->restart.policy, SW_RESTART_ALWAYS);
    assert_int_equal(lc->restart.initial_delay_ns, 250 * MS);
    assert_int_equal(lc->restart.max_delay_ns, 120 * S);
    assert_true(lc->restart.backoff_factor == 1.5);
    assert_true(lc->restart.jitter == 0.25);
    assert_int_equal(lc->restart.max_attempts, 7);
    sw_registry_free(r);
}

static void test_explicit_zeros_honoured(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                    "  - name: s\n"
                    "    kind: process.service\n"
                    "    process: p\n"
                    "    lifecycle:\n"
                    "      auto_start: false\n"
                    "      start_timeout: \"0s\"\n"
                    "      stop_timeout: 0\n"
                    "      stable_threshold: 0ms\n"
                    "      restart: { policy: never, initial_delay: 0, max_delay: 0, jitter: 0, "
                    "max_attempts: 0 }\n"
                    "  - name: g\n"
                    "    kind: service.group\n"
                    "    children: [ s ]\n"
                    "    intensity: 0\n"
                    "    lifecycle: { restart: { jitter: 0.0, initial_delay: \"0\" } }\n");
    const sw_lifecycle *lc = &t_get(r, "app:s")->as.service.lifecycle;
    assert_int_equal(lc->start_timeout_ns, 0);
    assert_int_equal(lc->stop_timeout_ns, 0);
    assert_int_equal(lc->stable_threshold_ns, 0);
    assert_int_equal(lc->restart.policy, SW_RESTART_NEVER);
    assert_int_equal(lc->restart.initial_delay_ns, 0);
    assert_int_equal(lc->restart.max_delay_ns, 0);
    assert_true(lc->restart.jitter == 0.0);
    assert_int_equal(lc->restart.max_attempts, 0);
    const sw_group *g = &t_get(r, "app:g")->as.group;
    assert_int_equal(g->intensity, 0);
    assert_true(g->lifecycle.restart.jitter == 0.0);
    assert_int_equal(g->lifecycle.restart.initial_delay_ns, 0);
    /* untouched fields keep their defaults */
    assert_int_equal(g->lifecycle.restart.max_delay_ns, 90 * S);
    assert_true(g->lifecycle.restart.backoff_factor == 2.0);
    sw_registry_free(r);
}

/* stop_timeout alone takes `infinity` (docs/registry.md "lifecycle"); other durations do not. */
static void test_stop_timeout_infinity(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                                 "  - { name: s, kind: process.service, process: p, "
                                 "lifecycle: { stop_timeout: infinity } }\n");
    assert_true(t_get(r, "app:s")->as.service.lifecycle.stop_timeout_ns == SW_DURATION_INFINITE);
    sw_registry_free(r);

    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                "  - { name: s, kind: process.service, process: p, "
                "lifecycle: { start_timeout: infinity, stop_timeout: forever } }\n",
                &d);
    assert_int_equal(d.n, 2);
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.start_timeout"),
              "invalid duration \"infinity\"");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.stop_timeout"), "(or infinity)");
    sw_diags_free(&d);
}

static void test_empty_lifecycle_keeps_defaults(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
        "  - { name: s, kind: process.service, process: p, lifecycle: }\n"
        "  - { name: t, kind: process.service, process: p, lifecycle: { restart: {} } }\n");
    assert_int_equal(t_get(r, "app:s")->as.service.lifecycle.stop_timeout_ns, 10 * S);
    assert_int_equal(t_get(r, "app:t")->as.service.lifecycle.restart.max_delay_ns, 90 * S);
    sw_registry_free(r);
}

static void test_requires_is_depends_on(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
        "  - { name: db, kind: process.service, process: p }\n"
        "  - { name: s, kind: process.service, process: p, lifecycle: { requires: db } }\n");
    const sw_lifecycle *lc = &t_get(r, "app:s")->as.service.lifecycle;
    assert_int_equal(lc->depends_on.n, 1);
    assert_string_equal(lc->depends_on.v[0].id, "app:db");
    sw_registry_free(r);

    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                "  - { name: db, kind: process.service, process: p }\n"
                "  - { name: s, kind: process.service, process: p, lifecycle: { depends_on: [db], "
                "requires: [db] } }\n",
                &d);
    const sw_diag *e = t_need_diag(&d, "are the same field");
    assert_string_equal(e->entry, "app:s");
    sw_diags_free(&d);
}

static void test_service_value_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                "  - name: s\n"
                "    kind: process.service\n"
                "    process: p\n"
                "    input: not-a-list\n"
                "    lifecycle:\n"
                "      auto_start: yes\n"
                "      start_timeout: -1\n"
                "      stop_timeout: 10 s\n"
                "      ready: later\n"
                "      restart: { backoff_factor: 0.5, jitter: 1.5, max_attempts: -1, "
                "initial_delay: [1] }\n",
                &d);
    assert_int_equal(d.n, 9);
    t_msg_has(t_need_field(&d, "app:s", "input"), "list");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.auto_start"), "true or false");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.start_timeout"), "duration");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.stop_timeout"), "\"10 s\"");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.ready"), "later");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.restart.backoff_factor"), "out of range");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.restart.jitter"), "out of range");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.restart.max_attempts"), "out of range");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.restart.initial_delay"), "duration");
    sw_diags_free(&d);
}

/* ---- service.group ---- */

static void test_group_defaults(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                                 "  - { name: a, kind: process.service, process: p }\n"
                                 "  - { name: b, kind: process.service, process: p }\n"
                                 "  - { name: g, kind: service.group, children: [ a, app:b ] }\n");
    const sw_entry *ge = t_get(r, "app:g");
    const sw_group *g = &ge->as.group;
    assert_int_equal(g->strategy, SW_ONE_FOR_ONE);
    assert_int_equal(g->intensity, 3);
    assert_int_equal(g->period_ns, 5 * S);
    assert_int_equal(g->children.n, 2);
    assert_string_equal(g->children.v[0].id, "app:a");
    assert_string_equal(g->children.v[1].id, "app:b");
    assert_ptr_equal(g->children.v[0].target, t_get(r, "app:a"));
    assert_ptr_equal(t_get(r, "app:a")->parent, ge);
    assert_ptr_equal(t_get(r, "app:b")->parent, ge);
    assert_null(ge->parent);
    assert_false(g->lifecycle.auto_start);
    assert_int_equal(g->lifecycle.stop_timeout_ns, 10 * S);
    assert_int_equal(g->lifecycle.restart.policy, SW_RESTART_ON_FAILURE);
    assert_int_equal(g->lifecycle.restart.max_delay_ns, 90 * S);
    /* a group is not a service */
    assert_int_equal(r->n_services, 2);
    sw_registry_free(r);
}

static void test_group_explicit_and_nested(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
        "  - { name: a, kind: process.service, process: p }\n"
        "  - { name: b, kind: process.service, process: p }\n"
        "  - { name: inner, kind: service.group, strategy: rest_for_one, children: [ b ] }\n"
        "  - name: outer\n"
        "    kind: service.group\n"
        "    strategy: one_for_all\n"
        "    intensity: 10\n"
        "    period: 30s\n"
        "    children: [ a, inner ]\n"
        "    lifecycle: { auto_start: true }\n");
    const sw_group *outer = &t_get(r, "app:outer")->as.group;
    assert_int_equal(outer->strategy, SW_ONE_FOR_ALL);
    assert_int_equal(outer->intensity, 10);
    assert_int_equal(outer->period_ns, 30 * S);
    assert_true(outer->lifecycle.auto_start);
    assert_int_equal(t_get(r, "app:inner")->as.group.strategy, SW_REST_FOR_ONE);
    assert_ptr_equal(t_get(r, "app:inner")->parent, t_get(r, "app:outer"));
    assert_ptr_equal(t_get(r, "app:b")->parent, t_get(r, "app:inner"));
    sw_registry_free(r);
}

static void test_group_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: \"return 1\" }\n"
                "  - { name: a, kind: process.service, process: p }\n"
                "  - { name: g1, kind: service.group, children: [ a ] }\n"
                "  - { name: g2, kind: service.group, children: [ a ] }\n"
                "  - { name: g3, kind: service.group, children: [] }\n"
                "  - { name: g4, kind: service.group, children: [ p ], strategy: one_for_none, "
                "period: 0 }\n"
                "  - { name: g5, kind: service.group }\n",
                &d);
    const sw_diag *e = t_need_diag(&d, "app:a already belongs to group app:g1");
    assert_string_equal(e->entry, "app:g2");
    assert_string_equal(e->field, "children[0]");
    assert_int_equal(e->line, 6);
    assert_string_equal(t_need_diag(&d, "must not be empty")->entry, "app:g3");
    t_msg_has(t_need_field(&d, "app:g4", "children[0]"), "process.lua");
    t_msg_has(t_need_field(&d, "app:g4", "strategy"), "one_for_none");
    t_msg_has(t_need_field(&d, "app:g4", "period"), "greater than 0");
    e = t_need_diag(&d, "required field is missing");
    assert_string_equal(e->entry, "app:g5");
    assert_string_equal(e->field, "children");
    assert_int_equal(d.n, 6);
    sw_diags_free(&d);
}

/* ---- process.lua / library.lua / process.host ---- */

static void test_process_lua_defaults(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: \"return function() return 1 end\" }\n"
        "  - { name: h, kind: process.host }\n");
    const sw_process_lua *p = &t_get(r, "app:p")->as.process_lua;
    assert_int_equal(p->limits.reductions, 0); /* time-sliced unless given */
    assert_true(p->limits.memory == 0);
    assert_false(p->jit);
    assert_null(p->method);
    assert_int_equal(p->imports.n, 0);
    assert_int_equal(t_get(r, "app:h")->as.host.workers, 0);
    assert_int_equal(r->n_services, 0);
    sw_registry_free(r);
}

static void test_process_lua_explicit(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - { name: util, kind: library.lua, source: \"return {}\" }\n"
        "  - { name: more, kind: library.lua, source: \"return {}\", imports: { u: util } }\n"
        "  - name: p\n"
        "    kind: process.lua\n"
        "    source: \"return { run = function() end }\"\n"
        "    method: run\n"
        "    jit: true\n"
        "    limits: { memory: 64MB, reductions: 500 }\n"
        "    imports: { util: util, m: app:more }\n"
        "  - { name: q, kind: process.lua, source: \"return 1\", limits: { memory: 4096 } }\n");
    const sw_process_lua *p = &t_get(r, "app:p")->as.process_lua;
    assert_string_equal(p->method, "run");
    assert_true(p->jit);
    assert_true(p->limits.memory == 64u * 1024 * 1024);
    assert_int_equal(p->limits.reductions, 500);
    assert_int_equal(p->imports.n, 2);
    assert_string_equal(p->imports.v[0].alias, "util");
    assert_string_equal(p->imports.v[0].library.id, "app:util");
    assert_ptr_equal(p->imports.v[0].library.target, t_get(r, "app:util"));
    assert_string_equal(p->imports.v[1].alias, "m");
    assert_string_equal(p->imports.v[1].library.id, "app:more");
    assert_true(t_get(r, "app:q")->as.process_lua.limits.memory == 4096u);
    const sw_library_lua *more = &t_get(r, "app:more")->as.library_lua;
    assert_int_equal(more->imports.n, 1);
    assert_ptr_equal(more->imports.v[0].library.target, t_get(r, "app:util"));
    sw_registry_free(r);
}

static void test_inline_source(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app\n"
                                 "entries:\n"
                                 "  - name: p\n"
                                 "    kind: process.lua\n"
                                 "    source: |\n"
                                 "      local x = 1\n"
                                 "      return function() return x end\n"
                                 "  - { name: l, kind: library.lua, source: 'return {}' }\n");
    const sw_source *src = &t_get(r, "app:p")->as.process_lua.source;
    assert_null(src->path);
    assert_string_equal(src->text, "local x = 1\nreturn function() return x end\n");
    assert_int_equal(src->len, strlen(src->text));
    assert_string_equal(t_get(r, "app:l")->as.library_lua.source.text, "return {}");
    sw_registry_free(r);
}

static void test_process_lua_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: svc, kind: process.service, process: a }\n"
        "  - { name: a, kind: process.lua }\n"
        "  - { name: b, kind: process.lua, source: \"\" }\n"
        "  - { name: c, kind: process.lua, source: 42, jit: \"no\" }\n"
        "  - { name: d, kind: process.lua, source: x, limits: { memory: 0 } }\n"
        "  - { name: e, kind: process.lua, source: x, limits: { memory: 64kb, reductions: 5 } }\n"
        "  - { name: f, kind: process.lua, source: x, imports: { json: lib, my-lib: lib, ok: svc } "
        "}\n"
        "  - { name: lib, kind: library.lua, source: x }\n"
        "  - { name: h, kind: process.host, workers: 0 }\n",
        &d);
    t_msg_has(t_need_field(&d, "app:a", "source"), "required");
    t_msg_has(t_need_field(&d, "app:b", "source"), "empty");
    t_msg_has(t_need_field(&d, "app:c", "source"), "got a number");
    t_msg_has(t_need_field(&d, "app:c", "jit"), "true or false");
    t_msg_has(t_need_field(&d, "app:d", "limits.memory"), "greater than 0");
    t_msg_has(t_need_field(&d, "app:e", "limits.memory"), "64kb");
    t_msg_has(t_need_field(&d, "app:e", "limits.reductions"), "out of range");
    t_msg_has(t_need_field(&d, "app:f", "imports.json"), "shadows a host module");
    t_msg_has(t_need_field(&d, "app:f", "imports.my-lib"), "Lua identifier");
    t_msg_has(t_need_field(&d, "app:f", "imports.ok"), "library.lua");
    t_msg_has(t_need_field(&d, "app:h", "workers"), "out of range");
    assert_int_equal(d.n, 11);
    sw_diags_free(&d);
}

/* Regression (found at d0aa34c, fixed in the working tree): parse_size converted a YAML integer
 * with (uint64_t)n->num and no range check, undefined behaviour for 2^64 and more (not caught by
 * -fsanitize=undefined, which leaves out float-cast-overflow); on x86-64
 * `memory: 100000000000000000000000000000` became 0 and was reported as "must be greater than 0".
 * Must be an "invalid size" error. */
static void test_size_field_out_of_range_number(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x, limits: { memory: "
        "100000000000000000000000000000 } }\n"
        "  - { name: q, kind: process.lua, source: x, limits: { memory: 18446744073709551616 } }\n",
        &d);
    assert_int_equal(d.n, 2);
    assert_int_equal(t_count_diags(&d, "must be greater than 0"), 0);
    assert_int_equal(t_count_diags(&d, "invalid size"), 2);
    sw_diags_free(&d);
}

/* file:// sources need a real directory: the path is resolved against the YAML file's
 * directory and must stay inside the app directory. */
static void test_file_source(void **state)
{
    (void)state;
    char root[] = "/tmp/steward-test-schema-XXXXXX";
    assert_non_null(mkdtemp(root));
    char path[512], yaml_path[512], outside[512];
    snprintf(path, sizeof path, "%s/lua", root);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/lua/main.lua", root);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("return function() return 42 end\n", fp);
    fclose(fp);
    snprintf(outside, sizeof outside, "%s-outside.lua", root);
    fp = fopen(outside, "w");
    assert_non_null(fp);
    fputs("return 1\n", fp);
    fclose(fp);
    snprintf(yaml_path, sizeof yaml_path, "%s/app.yaml", root);
    const char *base = strrchr(outside, '/') + 1;

    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "namespace: app\n"
             "entries:\n"
             "  - { name: ok, kind: process.lua, source: \"file://lua/main.lua\" }\n"
             "  - { name: missing, kind: process.lua, source: \"file://lua/nope.lua\" }\n"
             "  - { name: escape, kind: process.lua, source: \"file://../%s\" }\n"
             "  - { name: abs, kind: process.lua, source: \"file://%s\" }\n"
             "  - { name: empty, kind: process.lua, source: \"file://\" }\n"
             "  - { name: dir, kind: process.lua, source: \"file://lua\" }\n",
             base, outside);
    sw_registry_file f = {yaml_path, yaml, strlen(yaml)};
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *r = sw_registry_load_files(root, &f, 1, &d);
    assert_null(r);
    sw_diags_finish(&d);
    assert_int_equal(d.n, 5);
    assert_string_equal(t_need_diag(&d, "No such file or directory")->entry, "app:missing");
    assert_string_equal(t_need_diag(&d, "resolves outside the app directory")->entry, "app:escape");
    assert_string_equal(t_need_diag(&d, "must be relative to the YAML file")->entry, "app:abs");
    assert_string_equal(t_need_diag(&d, "file:// needs a path")->entry, "app:empty");
    assert_string_equal(t_need_diag(&d, "not a regular file")->entry, "app:dir");
    sw_diags_free(&d);

    /* only the good one: loads, with the code and the resolved path */
    snprintf(yaml, sizeof yaml,
             "namespace: app\nentries:\n  - { name: ok, kind: process.lua, source: "
             "\"file://lua/main.lua\" }\n");
    f.len = strlen(yaml);
    sw_diags_init(&d);
    r = sw_registry_load_files(root, &f, 1, &d);
    if (!r) t_print_diags(&d);
    assert_non_null(r);
    const sw_source *src = &t_get(r, "app:ok")->as.process_lua.source;
    assert_string_equal(src->text, "return function() return 42 end\n");
    assert_int_equal(src->len, strlen(src->text));
    assert_non_null(src->path);
    assert_non_null(strstr(src->path, "lua/main.lua"));
    sw_registry_free(r);
    sw_diags_free(&d);

    unlink(path);
    unlink(outside);
    snprintf(path, sizeof path, "%s/lua", root);
    rmdir(path);
    rmdir(root);
}

/* ---- meta ---- */

static void test_file_meta_merged_under_entry_meta(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "meta: { team: core, tier: 1 }\n"
                    "entries:\n"
                    "  - { name: a, kind: registry.entry, meta: { tier: 2, comment: hi } }\n"
                    "  - { name: b, kind: registry.entry }\n"
                    "  - { name: c, kind: registry.entry, meta: { team: other } }\n");
    const sw_node *m = t_get(r, "app:a")->meta;
    assert_non_null(m);
    assert_int_equal(m->type, SW_NODE_MAP);
    assert_int_equal(m->n, 3); /* team, tier (once), comment */
    assert_string_equal(meta_str(m, "team"), "core");
    assert_string_equal(meta_str(m, "tier"), "2");
    assert_string_equal(meta_str(m, "comment"), "hi");
    m = t_get(r, "app:b")->meta;
    assert_non_null(m);
    assert_int_equal(m->n, 2);
    assert_string_equal(meta_str(m, "team"), "core");
    assert_string_equal(meta_str(m, "tier"), "1");
    m = t_get(r, "app:c")->meta;
    assert_int_equal(m->n, 2);
    assert_string_equal(meta_str(m, "team"), "other");
    assert_string_equal(meta_str(m, "tier"), "1");
    sw_registry_free(r);
}

static void test_file_meta_is_per_file(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml"};
    const char *texts[] = {
        "namespace: app\nmeta: { team: core }\nentries:\n  - { name: a, kind: registry.entry }\n",
        "namespace: app\nentries:\n  - { name: b, kind: registry.entry, meta: { own: yes } }\n",
    };
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 2, &d);
    assert_non_null(r);
    assert_int_equal(r->n_files, 2);
    assert_string_equal(meta_str(t_get(r, "app:a")->meta, "team"), "core");
    const sw_node *m = t_get(r, "app:b")->meta;
    assert_int_equal(m->n, 1);
    assert_null(sw_node_get(m, "team"));
    assert_string_equal(t_get(r, "app:b")->file, "/tmp/x/b.yaml");
    /* entries in load order: files in the given order, then order within each file */
    assert_string_equal(r->entries[0]->id, "app:a");
    assert_string_equal(r->entries[1]->id, "app:b");
    assert_int_equal(r->entries[1]->index, 1);
    sw_registry_free(r);
    sw_diags_free(&d);
}

static void test_meta_must_be_a_mapping(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(
        "namespace: app\nmeta: [1]\nentries:\n  - { name: a, kind: registry.entry, meta: text }\n",
        &d);
    assert_int_equal(t_count_diags(&d, "expected a mapping"), 2);
    sw_diags_free(&d);
}

/* ---- registry.entry ---- */

static void test_registry_entry_free_form(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app.cfg\n"
                                 "entries:\n"
                                 "  - name: settings\n"
                                 "    kind: registry.entry\n"
                                 "    anything: { goes: [1, 2, { deep: true }] }\n"
                                 "    port: 8080\n");
    const sw_entry *e = t_get(r, "app.cfg:settings");
    assert_int_equal(e->kind, SW_KIND_DATA);
    assert_string_equal(e->ns, "app.cfg");
    assert_int_equal(sw_node_get(e->node, "port")->scalar, SW_SCALAR_INT);
    sw_registry_free(r);
}

/* ---- security.policy ---- */

static void test_policy_actions_string_and_list(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - name: one\n"
                    "    kind: security.policy\n"
                    "    policy: { actions: data.read, resources: \"app.data:*\", effect: allow }\n"
                    "  - name: many\n"
                    "    kind: security.policy\n"
                    "    policy:\n"
                    "      actions: [ \"data.read\", \"data.list\", \"*\" ]\n"
                    "      resources: [ \"*\", \"app:x\" ]\n"
                    "      effect: deny\n");
    const sw_policy *one = &t_get(r, "app:one")->as.policy;
    assert_int_equal(one->actions.n, 1);
    assert_string_equal(one->actions.v[0], "data.read");
    assert_int_equal(one->resources.n, 1);
    assert_string_equal(one->resources.v[0], "app.data:*");
    assert_int_equal(one->effect, SW_EFFECT_ALLOW);
    assert_int_equal(one->n_conditions, 0);
    assert_int_equal(one->groups.n, 0);
    const sw_policy *many = &t_get(r, "app:many")->as.policy;
    assert_int_equal(many->actions.n, 3);
    assert_string_equal(many->actions.v[1], "data.list");
    assert_string_equal(many->actions.v[2], "*");
    assert_int_equal(many->resources.n, 2);
    assert_int_equal(many->effect, SW_EFFECT_DENY);
    sw_registry_free(r);
}

static void test_policy_conditions_every_operator(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - name: pol\n"
        "    kind: security.policy\n"
        "    policy:\n"
        "      actions: \"*\"\n"
        "      resources: \"*\"\n"
        "      effect: allow\n"
        "      conditions:\n"
        "        - { field: actor.id, operator: eq, value: \"service:x\" }\n"
        "        - { field: action, operator: ne, value: data.write }\n"
        "        - { field: actor.meta.level, operator: lt, value: 5 }\n"
        "        - { field: actor.meta.level, operator: gt, value: 1.5 }\n"
        "        - { field: meta.size, operator: lte, value: 100 }\n"
        "        - { field: actor.meta.clearance, operator: gte, value: 2 }\n"
        "        - { field: resource, operator: in, value: [ \"a:b\", \"a:c\" ] }\n"
        "        - { field: actor.meta.role, operator: nin, value: [ guest, 3, true ] }\n"
        "        - { field: actor.meta.org.plan, operator: exists }\n"
        "        - { field: meta.debug, operator: nexists, value: true }\n"
        "        - { field: actor.meta.tags, operator: contains, value: admin }\n"
        "        - { field: actor.meta.tags, operator: ncontains, value: banned }\n"
        "        - { field: resource, operator: matches, value: \"^app\\\\.[a-z]+:.*$\" }\n"
        "        - { field: actor.id, operator: nmatches, value: \"^guest\" }\n"
        "        - { field: actor.meta.ok, operator: eq, value: false }\n");
    const sw_policy *p = &t_get(r, "app:pol")->as.policy;
    assert_int_equal(p->n_conditions, 15);
    const int ops[] = {SW_OP_EQ,      SW_OP_NE,       SW_OP_LT,       SW_OP_GT,
                       SW_OP_LTE,     SW_OP_GTE,      SW_OP_IN,       SW_OP_NIN,
                       SW_OP_EXISTS,  SW_OP_NEXISTS,  SW_OP_CONTAINS, SW_OP_NCONTAINS,
                       SW_OP_MATCHES, SW_OP_NMATCHES, SW_OP_EQ};
    for (size_t i = 0; i < 15; i++) {
        if (p->conditions[i].op != ops[i])
            fail_msg("condition %zu: op %d, expected %d", i, p->conditions[i].op, ops[i]);
        assert_false(p->conditions[i].has_value_from);
    }
    const sw_condition *c = p->conditions;
    assert_int_equal(c[0].field.root, SW_FIELD_ACTOR_ID);
    assert_string_equal(c[0].field.text, "actor.id");
    assert_int_equal(c[0].field.n, 0);
    assert_int_equal(c[0].value->scalar, SW_SCALAR_STRING);
    assert_string_equal(c[0].value->str, "service:x");
    assert_int_equal(c[1].field.root, SW_FIELD_ACTION);
    assert_int_equal(c[2].field.root, SW_FIELD_ACTOR_META);
    assert_int_equal(c[2].field.n, 1);
    assert_string_equal(c[2].field.segs[0], "level");
    assert_int_equal(c[2].value->scalar, SW_SCALAR_INT);
    assert_true(c[3].value->num == 1.5);
    assert_int_equal(c[4].field.root, SW_FIELD_META);
    assert_string_equal(c[4].field.segs[0], "size");
    assert_int_equal(c[6].field.root, SW_FIELD_RESOURCE);
    assert_int_equal(c[6].value->type, SW_NODE_SEQ);
    assert_int_equal(c[6].value->n, 2);
    assert_int_equal(c[7].value->n, 3);
    assert_int_equal(c[8].field.n, 2);
    assert_string_equal(c[8].field.segs[0], "org");
    assert_string_equal(c[8].field.segs[1], "plan");
    assert_null(c[8].value);
    assert_int_equal(c[9].value->scalar, SW_SCALAR_BOOL);
    assert_string_equal(c[12].value->str, "^app\\.[a-z]+:.*$");
    assert_int_equal(c[14].value->scalar, SW_SCALAR_BOOL);
    sw_registry_free(r);
}

static void test_policy_value_from(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(
        "namespace: app\n"
        "entries:\n"
        "  - name: pol\n"
        "    kind: security.policy\n"
        "    policy:\n"
        "      actions: data.read\n"
        "      resources: \"*\"\n"
        "      effect: allow\n"
        "      conditions:\n"
        "        - { field: meta.owner, operator: eq, value_from: actor.id }\n"
        "        - { field: actor.meta.org, operator: in, value_from: meta.allowed.orgs }\n");
    const sw_policy *p = &t_get(r, "app:pol")->as.policy;
    assert_int_equal(p->n_conditions, 2);
    const sw_condition *c = p->conditions;
    assert_true(c[0].has_value_from);
    assert_null(c[0].value);
    assert_int_equal(c[0].value_from.root, SW_FIELD_ACTOR_ID);
    assert_string_equal(c[0].value_from.text, "actor.id");
    assert_true(c[1].has_value_from);
    assert_int_equal(c[1].op, SW_OP_IN);
    assert_int_equal(c[1].value_from.root, SW_FIELD_META);
    assert_int_equal(c[1].value_from.n, 2);
    assert_string_equal(c[1].value_from.segs[0], "allowed");
    assert_string_equal(c[1].value_from.segs[1], "orgs");
    sw_registry_free(r);
}

static void test_policy_groups_qualified(void **state)
{
    (void)state;
    sw_registry *r = t_must_load("namespace: app.sec\n"
                                 "entries:\n"
                                 "  - name: pol\n"
                                 "    kind: security.policy\n"
                                 "    policy: { actions: \"*\", resources: \"*\", effect: allow }\n"
                                 "    groups: [ readers, other.ns:writers, app.sec:admins ]\n");
    const sw_policy *p = &t_get(r, "app.sec:pol")->as.policy;
    assert_int_equal(p->groups.n, 3);
    assert_string_equal(p->groups.v[0], "app.sec:readers");
    assert_string_equal(p->groups.v[1], "other.ns:writers");
    assert_string_equal(p->groups.v[2], "app.sec:admins");
    sw_registry_free(r);
}

static void test_policy_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - name: pol\n"
                "    kind: security.policy\n"
                "    policy:\n"
                "      actions: [ \"a*b\", \"?\", \"*\" ]\n"
                "      resources: []\n"
                "      effect: permit\n"
                "      conditions:\n"
                "        - { field: actor.id, operator: eq }\n"
                "        - { field: actor.id, operator: eq, value: 1, value_from: actor.id }\n"
                "        - { field: bogus, operator: eq, value: 3 }\n"
                "        - { field: action, operator: matches, value: \"(\" }\n"
                "        - { field: resource, operator: in, value: \"a:b\" }\n"
                "        - { field: resource, operator: exists, value: 1 }\n"
                "        - { field: resource, operator: eq, value: [ 1 ] }\n"
                "        - { field: resource, operator: eq, value: ~ }\n"
                "        - { field: meta..x, operator: eq, value: 1 }\n"
                "        - { field: resource, operator: eqq, value: 1 }\n"
                "        - { field: resource, operator: in, value: [ a, [ b ] ] }\n"
                "  - { name: nopolicy, kind: security.policy }\n",
                &d);
    const sw_diag *e = t_need_field(&d, "app:pol", "policy.actions[0]");
    t_msg_has(e, "a*b");
    assert_int_equal(e->line, 6);
    assert_int_equal(e->col, 18);
    t_msg_has(t_need_field(&d, "app:pol", "policy.actions[1]"), "\"?\"");
    t_msg_has(t_need_field(&d, "app:pol", "policy.resources"), "empty");
    t_msg_has(t_need_field(&d, "app:pol", "policy.effect"), "permit");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[0]"), "value_from");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[1]"), "value_from");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[2]"), "bogus");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[3]"), "regular expression");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[4]"), "list");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[5]"), "exists");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[6]"), "got a list");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[7]"), "got null");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[8]"), "meta..x");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[9]"), "(did you mean \"eq\"?)");
    assert_string_equal(t_need_under(&d, "app:pol", "policy.conditions[9]")->field,
                        "policy.conditions[9].operator");
    t_msg_has(t_need_under(&d, "app:pol", "policy.conditions[10]"), "list items");
    t_msg_has(t_need_field(&d, "app:nopolicy", "policy"), "required");
    assert_int_equal(d.n, 16);
    sw_diags_free(&d);
}

/* A list of groups with a non-string in it is an error, never a crash: at d0aa34c the half-read
 * list (with a NULL hole) reached the group map in resolve_refs and crashed in the hash. */
static void test_policy_groups_with_non_string(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - name: p\n"
                "    kind: security.policy\n"
                "    policy: { actions: a, resources: \"*\", effect: allow }\n"
                "    groups: [ readers, 5 ]\n",
                &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].field, "groups[1]");
    assert_non_null(strstr(d.v[0].msg, "expected a string, got a number"));
    sw_diags_free(&d);
}

/* Regression (was a bug): registry/policy.c parse_groups only validates the part after the colon of a qualified
 * group, so ":readers" (empty namespace) and "bad ns:readers" are accepted as group names,
 * although no reference in lifecycle.security.groups can ever name them (sw_parse_ref checks
 * both halves). Correct: "is not a valid group name" for both. */
static void test_policy_group_namespace_validated(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - name: p\n"
                "    kind: security.policy\n"
                "    policy: { actions: a, resources: \"*\", effect: allow }\n"
                "    groups: [ \":readers\", \"bad ns:readers\", \"a:b:c\" ]\n",
                &d);
    assert_int_equal(t_count_diags(&d, "is not a valid group name"), 3);
    sw_diags_free(&d);
}

/* ---- lifecycle.security ---- */

static void test_lifecycle_security(void **state)
{
    (void)state;
    sw_registry *r =
        t_must_load("namespace: app\n"
                    "entries:\n"
                    "  - { name: p, kind: process.lua, source: x }\n"
                    "  - { name: pol, kind: security.policy, policy: { actions: \"*\", resources: "
                    "\"*\", effect: allow }, groups: [ readers, ext:ops ] }\n"
                    "  - name: s\n"
                    "    kind: process.service\n"
                    "    process: p\n"
                    "    lifecycle:\n"
                    "      security:\n"
                    "        actor: { id: \"service:s\", meta: { role: worker } }\n"
                    "        groups: [ readers, ext:ops ]\n"
                    "        policies: [ pol ]\n"
                    "  - { name: t, kind: process.service, process: p, lifecycle: { security: { "
                    "policies: app:pol } } }\n");
    const sw_security_ctx *c = &t_get(r, "app:s")->as.service.lifecycle.security;
    assert_true(c->present);
    assert_string_equal(c->actor_id, "service:s");
    assert_non_null(c->actor_meta);
    assert_string_equal(meta_str(c->actor_meta, "role"), "worker");
    assert_int_equal(c->groups.n, 2);
    assert_string_equal(c->groups.v[0].id, "app:readers");
    assert_null(c->groups.v[0].target);
    assert_string_equal(c->groups.v[1].id, "ext:ops");
    assert_int_equal(c->policies.n, 1);
    assert_ptr_equal(c->policies.v[0].target, t_get(r, "app:pol"));
    const sw_security_ctx *t = &t_get(r, "app:t")->as.service.lifecycle.security;
    assert_true(t->present);
    assert_null(t->actor_id);
    assert_int_equal(t->policies.n, 1);
    sw_registry_free(r);
}

static void test_lifecycle_security_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: x }\n"
                "  - name: s\n"
                "    kind: process.service\n"
                "    process: p\n"
                "    lifecycle:\n"
                "      security:\n"
                "        actor: { meta: { role: worker } }\n"
                "        groups: [ nogroup ]\n"
                "        policies: [ nopol, p ]\n",
                &d);
    assert_int_equal(d.n, 4);
    assert_string_equal(t_need_diag(&d, "required field is missing")->field,
                        "lifecycle.security.actor.id");
    const sw_diag *e = t_need_diag(&d, "no policy joins group app:nogroup");
    assert_string_equal(e->field, "lifecycle.security.groups[0]");
    assert_int_equal(e->line, 10);
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.security.policies[0]"), "app:nopol");
    t_msg_has(t_need_field(&d, "app:s", "lifecycle.security.policies[1]"), "security.policy");
    sw_diags_free(&d);
}

/* ---- unknown fields, kinds and file keys ---- */

static void test_unknown_field_suggestions(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: x, jitt: true, limts: {}, zzzzzz: 1 }\n"
                "  - name: s\n"
                "    kind: process.service\n"
                "    process: p\n"
                "    confg: {}\n"
                "    lifecycle:\n"
                "      auto_strat: true\n"
                "      Depends_On: []\n"
                "      restart: { max_atempts: 3, polcy: never }\n"
                "  - { name: g, kind: service.grup }\n"
                "  - { name: h, kind: Process.Host }\n",
                &d);
    const sw_diag *e = t_need_diag(&d, "unknown field (did you mean \"jit\"?)");
    assert_string_equal(e->field, "jitt");
    assert_string_equal(e->entry, "app:p");
    assert_string_equal(t_need_diag(&d, "(did you mean \"limits\"?)")->field, "limts");
    assert_string_equal(t_need_diag(&d, "(did you mean \"config\"?)")->field, "confg");
    assert_string_equal(t_need_diag(&d, "(did you mean \"auto_start\"?)")->field,
                        "lifecycle.auto_strat");
    assert_string_equal(t_need_diag(&d, "(did you mean \"depends_on\"?)")->field,
                        "lifecycle.Depends_On");
    assert_string_equal(t_need_diag(&d, "(did you mean \"max_attempts\"?)")->field,
                        "lifecycle.restart.max_atempts");
    assert_string_equal(t_need_diag(&d, "(did you mean \"policy\"?)")->field,
                        "lifecycle.restart.polcy");
    e = t_need_diag(&d, "unknown kind \"service.grup\" (did you mean \"service.group\"?)");
    assert_string_equal(e->entry, "app:g");
    assert_string_equal(e->field, "kind");
    assert_non_null(
        t_need_diag(&d, "unknown kind \"Process.Host\" (did you mean \"process.host\"?)"));
    /* too far from every field: no suggestion */
    e = NULL;
    for (size_t i = 0; i < d.n; i++)
        if (d.v[i].field && strcmp(d.v[i].field, "zzzzzz") == 0) e = &d.v[i];
    assert_non_null(e);
    assert_string_equal(e->msg, "unknown field");
    assert_int_equal(d.n, 10);
    sw_diags_free(&d);
}

static void test_file_header_errors(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml", "/tmp/x/c.yaml", "/tmp/x/d.yaml",
                           "/tmp/x/e.yaml"};
    const char *texts[] = {
        "entries:\n  - { name: a, kind: registry.entry }\n",      /* no namespace */
        "namspace: app\nnamespace: app\nentries: []\n",           /* typo'd key */
        "version: \"2.0\"\nnamespace: \"bad:ns\"\nentries: []\n", /* version, namespace */
        "- just a list\n",                                        /* not a mapping */
        "namespace: app\nentries: { a: 1 }\n",                    /* entries not a list */
    };
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 5, &d);
    assert_null(r);
    sw_diags_finish(&d);
    const sw_diag *e = t_need_diag(&d, "every file names its namespace");
    assert_string_equal(e->file, "/tmp/x/a.yaml");
    assert_string_equal(e->field, "namespace");
    e = t_need_diag(&d, "unknown field (did you mean \"namespace\"?)");
    assert_string_equal(e->file, "/tmp/x/b.yaml");
    assert_int_equal(e->line, 1);
    assert_string_equal(e->field, "namspace");
    assert_string_equal(t_need_diag(&d, "unsupported version")->file, "/tmp/x/c.yaml");
    assert_string_equal(t_need_diag(&d, "must be a name of letters")->field, "namespace");
    assert_string_equal(t_need_diag(&d, "expected a mapping with namespace and entries")->file,
                        "/tmp/x/d.yaml");
    assert_string_equal(t_need_diag(&d, "expected a list of entries")->file, "/tmp/x/e.yaml");
    assert_int_equal(d.n, 6);
    sw_diags_free(&d);
}

static void test_entry_identity_errors(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml"};
    const char *texts[] = {
        "namespace: app\n"
        "entries:\n"
        "  - { name: dup, kind: registry.entry }\n"
        "  - { kind: registry.entry }\n"
        "  - { name: \"a:b\", kind: registry.entry }\n"
        "  - { name: nokind }\n"
        "  - just-a-string\n",
        "namespace: app\n"
        "entries:\n"
        "  - { name: dup, kind: registry.entry }\n",
    };
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 2, &d);
    assert_null(r);
    sw_diags_finish(&d);
    const sw_diag *e = t_need_diag(&d, "duplicate id app:dup (first defined at /tmp/x/a.yaml:3:5)");
    assert_string_equal(e->file, "/tmp/x/b.yaml");
    assert_int_equal(e->line, 3);
    assert_string_equal(e->entry, "app:dup");
    /* an entry without a name has no id: its field path says which entry it is */
    e = t_need_diag(&d, "required field is missing");
    assert_non_null(e->field);
    assert_non_null(strstr(e->field, "name"));
    assert_int_equal(e->line, 4);
    e = t_need_diag(&d, "must be a name of letters");
    assert_non_null(e->field);
    assert_non_null(strstr(e->field, "name"));
    assert_int_equal(e->line, 5);
    e = NULL;
    for (size_t i = 0; i < d.n; i++)
        if (d.v[i].field && strcmp(d.v[i].field, "kind") == 0) e = &d.v[i];
    assert_non_null(e);
    assert_string_equal(e->entry, "app:nokind");
    assert_string_equal(t_need_diag(&d, "an entry must be a mapping")->field, "entries[4]");
    assert_int_equal(d.n, 5);
    sw_diags_free(&d);
}

/* ---- diagnostics ---- */

static void test_diag_fields_exact(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: x }\n"
                "  - name: s\n"
                "    kind: process.service\n"
                "    process: p\n"
                "    lifecycle:\n"
                "      restart:\n"
                "        max_delay: 5x\n"
                "      depends_on: [ missing ]\n",
                &d);
    assert_int_equal(d.n, 2);
    /* sorted by file, line, column */
    const sw_diag *e = &d.v[0];
    assert_string_equal(e->file, T_FILE);
    assert_int_equal(e->line, 9);
    assert_int_equal(e->col, 20);
    assert_string_equal(e->entry, "app:s");
    assert_string_equal(e->field, "lifecycle.restart.max_delay");
    assert_string_equal(
        e->msg,
        "invalid duration \"5x\": use \"250ms\", \"1.5s\", \"2m\", \"1h\" or a number of seconds");
    char buf[512];
    sw_diag_format(e, buf, sizeof buf);
    assert_string_equal(buf, "/tmp/x/app.yaml:9:20: entry app:s field lifecycle.restart.max_delay: "
                             "invalid duration \"5x\": "
                             "use \"250ms\", \"1.5s\", \"2m\", \"1h\" or a number of seconds");
    e = &d.v[1];
    assert_string_equal(e->file, T_FILE);
    assert_int_equal(e->line, 10);
    assert_int_equal(e->col, 21);
    assert_string_equal(e->entry, "app:s");
    assert_string_equal(e->field, "lifecycle.depends_on[0]");
    assert_string_equal(e->msg, "app:missing names no entry");
    sw_diags_free(&d);
}

static void test_reference_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail("namespace: app\n"
                "entries:\n"
                "  - { name: p, kind: process.lua, source: x }\n"
                "  - { name: db, kind: process.service, process: p }\n"
                "  - { name: a, kind: process.service, process: db }\n"
                "  - { name: b, kind: process.service, process: \"bad name\" }\n"
                "  - { name: c, kind: process.service, process: [ p ] }\n"
                "  - { name: e, kind: process.service, process: other:p, host: p }\n"
                "  - { name: f, kind: process.service, process: \"a:b:c\" }\n",
                &d);
    const sw_diag *e = t_need_field(&d, "app:a", "process");
    t_msg_has(e, "app:db is a process.service");
    t_msg_has(e, "process.lua");
    assert_int_equal(e->line, 5);
    assert_int_equal(e->col, 48);
    t_msg_has(t_need_field(&d, "app:b", "process"), "\"bad name\"");
    t_msg_has(t_need_field(&d, "app:c", "process"), "got a list");
    t_msg_has(t_need_field(&d, "app:e", "process"), "other:p");
    t_msg_has(t_need_field(&d, "app:e", "host"), "process.host");
    t_msg_has(t_need_field(&d, "app:f", "process"), "\"a:b:c\"");
    assert_int_equal(d.n, 6);
    sw_diags_free(&d);
}

/* check reports all errors it finds: one per problem, across entries and files, and errors
 * found only once every entry is known (references, cycles) come with the per-entry ones. */
static void test_every_error_reported(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml"};
    const char *texts[] = {
        "namespace: app\n"
        "entries:\n"
        "  - { name: p, kind: process.lua, source: x, jit: 1 }\n" /* 1 */
        "  - { name: s1, kind: process.service, process: p, lifecycle: { stop_timeout: x } "
        "}\n"                                                                /* 2 */
        "  - { name: s2, kind: process.service, process: nope }\n"           /* 3 */
        "  - { name: s3, kind: process.service, process: p, colour: red }\n" /* 4 */
        "  - { name: c1, kind: process.service, process: p, lifecycle: { depends_on: c2 } "
        "}\n"
        "  - { name: c2, kind: process.service, process: p, lifecycle: { depends_on: c1 } "
        "}\n", /* 5: the cycle */
        "namespace: app\n"
        "entries:\n"
        "  - { name: k, kind: no.such.kind }\n"                                     /* 6 */
        "  - { name: g, kind: service.group, children: [ s1 ], intensity: many }\n" /* 7 */
        "  - { name: pol, kind: security.policy, policy: { actions: [], resources: \"*\", "
        "effect: allow } }\n", /* 8 */
    };
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 2, &d);
    assert_null(r);
    sw_diags_finish(&d);
    if (d.n != 8) t_print_diags(&d);
    assert_int_equal(d.n, 8);
    assert_non_null(t_need_diag(&d, "dependency cycle: app:c1 -> app:c2 -> app:c1"));
    assert_int_equal(t_count_diags(&d, "no.such.kind"), 1);
    /* sorted: every a.yaml error before every b.yaml error */
    size_t first_b = 0;
    while (first_b < d.n && strcmp(d.v[first_b].file, "/tmp/x/a.yaml") == 0) first_b++;
    assert_int_equal(first_b, 5);
    for (size_t i = first_b; i < d.n; i++) assert_string_equal(d.v[i].file, "/tmp/x/b.yaml");
    sw_diags_free(&d);
}

static void test_valid_empty_and_null_entries(void **state)
{
    (void)state;
    const char *paths[] = {"/tmp/x/a.yaml", "/tmp/x/b.yaml"};
    const char *texts[] = {"namespace: app\nentries: []\n",
                           "version: \"1.0\"\nnamespace: app\nentries:\n"};
    sw_diags d;
    sw_registry *r = t_load_files(paths, texts, 2, &d);
    assert_non_null(r);
    assert_int_equal(d.n, 0);
    assert_int_equal(r->n_entries, 0);
    assert_int_equal(r->n_files, 2);
    assert_null(sw_registry_get(r, "app:x"));
    sw_registry_free(r);
    sw_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service_lifecycle_defaults),
        cmocka_unit_test(test_service_lifecycle_explicit),
        cmocka_unit_test(test_explicit_zeros_honoured),
        cmocka_unit_test(test_stop_timeout_infinity),
        cmocka_unit_test(test_empty_lifecycle_keeps_defaults),
        cmocka_unit_test(test_requires_is_depends_on),
        cmocka_unit_test(test_service_value_errors),
        cmocka_unit_test(test_group_defaults),
        cmocka_unit_test(test_group_explicit_and_nested),
        cmocka_unit_test(test_group_errors),
        cmocka_unit_test(test_process_lua_defaults),
        cmocka_unit_test(test_process_lua_explicit),
        cmocka_unit_test(test_inline_source),
        cmocka_unit_test(test_process_lua_errors),
        cmocka_unit_test(test_size_field_out_of_range_number),
        cmocka_unit_test(test_file_source),
        cmocka_unit_test(test_file_meta_merged_under_entry_meta),
        cmocka_unit_test(test_file_meta_is_per_file),
        cmocka_unit_test(test_meta_must_be_a_mapping),
        cmocka_unit_test(test_registry_entry_free_form),
        cmocka_unit_test(test_policy_actions_string_and_list),
        cmocka_unit_test(test_policy_conditions_every_operator),
        cmocka_unit_test(test_policy_value_from),
        cmocka_unit_test(test_policy_groups_qualified),
        cmocka_unit_test(test_policy_errors),
        cmocka_unit_test(test_policy_groups_with_non_string),
        cmocka_unit_test(test_policy_group_namespace_validated),
        cmocka_unit_test(test_lifecycle_security),
        cmocka_unit_test(test_lifecycle_security_errors),
        cmocka_unit_test(test_unknown_field_suggestions),
        cmocka_unit_test(test_file_header_errors),
        cmocka_unit_test(test_entry_identity_errors),
        cmocka_unit_test(test_diag_fields_exact),
        cmocka_unit_test(test_reference_errors),
        cmocka_unit_test(test_every_error_reported),
        cmocka_unit_test(test_valid_empty_and_null_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
