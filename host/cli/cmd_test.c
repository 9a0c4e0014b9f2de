/* `steward test DIR [--filter PATTERN] [--format tap|junit|text]` (docs/operating.md): runs
 * every test.lua entry of the app, one after another, each in a process (lua/test.lua's
 * runner around its chunk) under the identity of its lifecycle.security, with the services it
 * lists started first (with what they depend on) and stopped after. The runner prints the
 * tests; this file adds the envelope (TAP plan, JUnit root, text summary) and the exit code:
 * 0 when every test passed, 1 otherwise, 2 when the app does not load. */
#include <lauxlib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "api.h"
#include "commands.h"
#include "config.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"
#include "supervisor.h"

#define TICK_MS         10
#define SERVICE_WAIT_MS 30000

typedef struct test_run {
    uv_loop_t loop;
    uv_timer_t tick; /* wakes the loop while waiting for a condition */
    uv_async_t wake;
    sw_supervisor sup;
    sw_runtime *rt;
    atomic_bool ended;     /* the test process ended (set on its worker thread) */
    unsigned char *result; /* its encoded result, copied */
    size_t result_len;
    char *error;
} test_run;

typedef struct counts {
    long tests, failed, pending;
} counts;

static void on_tick(uv_timer_t *t) { (void)t; }
static void on_wake(uv_async_t *h) { (void)h; }

/* Worker thread: keep the result, wake the loop. */
static void on_test_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    (void)pid;
    test_run *r = arg;
    if (info->kind != SW_EXIT_OK) r->error = strdup(info->error ? info->error : "failed");
    if (info->result_len && (r->result = malloc(info->result_len))) {
        memcpy(r->result, info->result, info->result_len);
        r->result_len = info->result_len;
    }
    atomic_store(&r->ended, true);
    uv_async_send(&r->wake);
}

/* Runs the loop until done(r, arg) or ms pass; whether it got there. */
static bool run_until(test_run *r, bool (*done)(test_run *, void *), void *arg, uint64_t ms)
{
    uint64_t until = uv_now(&r->loop) + ms;
    uv_timer_start(&r->tick, on_tick, TICK_MS, TICK_MS);
    bool ok;
    while (!(ok = done(r, arg)) && uv_now(&r->loop) < until) uv_run(&r->loop, UV_RUN_ONCE);
    uv_timer_stop(&r->tick);
    return ok;
}

static bool services_settled(test_run *r, void *arg)
{
    const sw_reflist *l = arg;
    for (size_t i = 0; i < l->n; i++) {
        sw_svc *v = sw_supervisor_find(&r->sup, l->v[i].id);
        if (v && sw_svc_state_of(v) != SW_SVC_RUNNING && !sw_svc_for_good(v)) return false;
    }
    return true;
}

/* Whether no service of the app runs (the listed ones and what they needed). */
static bool services_down(test_run *r, void *arg)
{
    const sw_registry *reg = arg;
    for (size_t i = 0; i < reg->n_entries; i++) {
        sw_svc *v = reg->entries[i]->kind == SW_KIND_SERVICE
                        ? sw_supervisor_find(&r->sup, reg->entries[i]->id)
                        : NULL;
        if (v && sw_svc_active(v)) return false;
    }
    return true;
}

static bool shut_down(test_run *r, void *arg)
{
    (void)arg;
    return r->sup.done;
}

static bool test_ended(test_run *r, void *arg)
{
    (void)arg;
    return atomic_load(&r->ended);
}

/* The counts the runner returned ({tests, failed, pending}), read in a scratch state. */
static void read_counts(const test_run *r, counts *c)
{
    lua_State *L = luaL_newstate();
    if (!L) return;
    if (r->result && sw_msg_decode(L, r->result, r->result_len) > 0 && lua_istable(L, -1)) {
        lua_getfield(L, -1, "value");
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "tests");
            lua_getfield(L, -2, "failed");
            lua_getfield(L, -3, "pending");
            c->tests = (long)lua_tointeger(L, -3);
            c->failed = (long)lua_tointeger(L, -2);
            c->pending = (long)lua_tointeger(L, -1);
        }
    }
    lua_close(L);
}

/* Starts what the test lists; false with why if one does not come up. */
static bool start_services(test_run *r, const sw_entry *e, char *why, size_t len)
{
    const sw_reflist *l = &e->as.test_lua.services;
    for (size_t i = 0; i < l->n; i++) sw_supervisor_start_one(&r->sup, l->v[i].id);
    if (!run_until(r, services_settled, (void *)l, SERVICE_WAIT_MS)) {
        snprintf(why, len, "its services did not start within %ds", SERVICE_WAIT_MS / 1000);
        return false;
    }
    for (size_t i = 0; i < l->n; i++) {
        sw_svc *v = sw_supervisor_find(&r->sup, l->v[i].id);
        if (v && sw_svc_for_good(v)) {
            snprintf(why, len, "service %s failed to start", l->v[i].id);
            return false;
        }
    }
    return true;
}

static void print_xml_escaped(const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", stdout); break;
        case '>': fputs("&gt;", stdout); break;
        case '&': fputs("&amp;", stdout); break;
        case '"': fputs("&quot;", stdout); break;
        default: putchar(*s);
        }
    }
}

/* A test file that could not run (or whose process failed) counts as one failed test, reported
 * in the run's format so the TAP plan and the JUnit counts stay true. */
static void report_not_run(const char *format, const char *id, long number, const char *why)
{
    fprintf(stderr, "%s: %s\n", id, why);
    if (strcmp(format, "tap") == 0) {
        printf("not ok %ld - %s: (not run)\n# %s\n", number, id, why);
    } else if (strcmp(format, "junit") == 0) {
        printf("<testsuite name=\"");
        print_xml_escaped(id);
        printf("\" tests=\"1\" failures=\"1\" skipped=\"0\">\n  <testcase classname=\"");
        print_xml_escaped(id);
        printf("\" name=\"(not run)\"><failure message=\"");
        print_xml_escaped(why);
        printf("\">");
        print_xml_escaped(why);
        printf("</failure></testcase>\n</testsuite>\n");
    } else {
        printf("FAIL    %s: (not run)\n  %s\n", id, why);
    }
    fflush(stdout);
}

/* Stops every service that runs: those the test listed and those they depend on, so the next
 * test starts from none. */
static void stop_services(test_run *r, const sw_registry *reg)
{
    for (size_t i = reg->n_entries; i-- > 0;) {
        const sw_entry *e = reg->entries[i];
        sw_svc *v = e->kind == SW_KIND_SERVICE ? sw_supervisor_find(&r->sup, e->id) : NULL;
        if (v && sw_svc_active(v)) sw_supervisor_stop_one(&r->sup, e->id);
    }
    run_until(r, services_down, (void *)reg, SERVICE_WAIT_MS);
}

/* One test.lua: its services, its process, its counts (a test that cannot run counts as one
 * failure). */
static void run_test(test_run *r, const sw_cli *cli, const sw_registry *reg, const sw_entry *e,
                     long offset, counts *c)
{
    char off[32];
    snprintf(off, sizeof off, "%ld", offset);
    char *argv[] = {(char *)(cli->format ? cli->format : "text"),
                    (char *)(cli->filter ? cli->filter : ""), off, (char *)e->id};
    counts got = {1, 1, 0};
    char why[512] = "";
    if (start_services(r, e, why, sizeof why)) {
        atomic_store(&r->ended, false);
        sw_spawn s = {.entry = e,
                      .service = e->id, /* its security context is keyed by the test's id */
                      .argc = 4,
                      .argv = argv,
                      .on_exit = on_test_exit,
                      .cb_arg = r,
                      .tree = e->id};
        fflush(stdout);
        sw_proc *p = sw_proc_prepare(r->rt, &s, why, sizeof why);
        if (p && !sw_proc_launch(p, &s)) snprintf(why, sizeof why, "launch failed");
        else if (p && run_until(r, test_ended, NULL, UINT32_MAX) && !r->error) read_counts(r, &got);
        sw_std_streams_flush(&r->rt->std, SW_STD_FLUSH_TIMEOUT_NS);
        if (r->error) snprintf(why, sizeof why, "the test process failed: %s", r->error);
    }
    if (why[0]) report_not_run(argv[0], e->id, offset + 1, why);
    stop_services(r, reg);
    free(r->result);
    free(r->error);
    r->result = NULL, r->error = NULL, r->result_len = 0;
    c->tests += got.tests, c->failed += got.failed, c->pending += got.pending;
}

static int run_tests(const sw_cli *cli, const sw_host_config *cfg, const sw_registry *reg)
{
    test_run r = {0};
    sw_cli quiet = *cli; /* the host's own info lines would interleave with the report */
    if (!quiet.log_level && !cfg->log_level) quiet.log_level = "warn";
    sw_log *log = sw_cli_log(&quiet, cfg);
    sw_runtime_config rc;
    sw_host_config_runtime(cfg, &rc);
    sw_api_use(&rc);
    rc.service_request = sw_supervisor_service_request;
    rc.service_request_arg = &r.sup;
    rc.test_main = sw_api_test_main;
    r.rt = sw_runtime_new(reg, log, &rc);
    uv_loop_init(&r.loop);
    if (!r.rt || sw_supervisor_init(&r.sup, &r.loop, r.rt, reg, log) != 0) {
        fprintf(stderr, "steward: cannot start the runtime\n");
        return 2;
    }
    r.sup.shutdown_timeout_ns = cfg->shutdown_timeout_ns;
    uv_timer_init(&r.loop, &r.tick);
    uv_async_init(&r.loop, &r.wake, on_wake);
    const char *format = cli->format ? cli->format : "text";
    if (strcmp(format, "junit") == 0)
        printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    counts c = {0, 0, 0};
    size_t files = 0;
    for (size_t i = 0; i < reg->n_entries; i++) {
        if (reg->entries[i]->kind != SW_KIND_TEST_LUA) continue;
        run_test(&r, cli, reg, reg->entries[i], c.tests, &c);
        files++;
    }
    if (strcmp(format, "junit") == 0) printf("</testsuites>\n");
    else if (strcmp(format, "tap") == 0) printf("1..%ld\n", c.tests);
    else
        printf("%zu test files, %ld tests: %ld passed, %ld failed, %ld pending\n", files, c.tests,
               c.tests - c.failed - c.pending, c.failed, c.pending);
    fflush(stdout);
    sw_supervisor_shutdown(&r.sup);
    run_until(&r, shut_down, NULL, UINT32_MAX);
    sw_runtime_free(r.rt);
    sw_supervisor_close(&r.sup);
    uv_close((uv_handle_t *)&r.tick, NULL);
    uv_close((uv_handle_t *)&r.wake, NULL);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_loop_close(&r.loop);
    sw_log_free(log);
    return c.failed ? 1 : 0;
}

int sw_cmd_test(const sw_cli *cli)
{
    sw_host_config cfg;
    sw_registry *reg = sw_load_host(cli, &cfg);
    if (!reg) return 2;
    int code = run_tests(cli, &cfg, reg);
    sw_registry_free(reg);
    sw_host_config_free(&cfg);
    return code;
}
