/* The supervisor through its C interface (scenarios 3, 5, 12 and stopping/starting by hand):
 * an app loaded from inline YAML, a real runtime and a sw_supervisor on a uv loop that the
 * test drives with a ticking timer. States are read from the sw_svc structs; order and counts
 * from the JSON event log, written to a temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api.h"
#include "backoff.h"
#include "registry.h"
#include "runtime.h"
#include "supervisor.h"
#include "units.h"

/* Processes shared by every app below. */
#define PROCESSES                                                                  \
    "  - name: wait_cancel\n"                                                      \
    "    kind: process.lua\n"                                                      \
    "    source: |\n"                                                              \
    "      return function()\n"                                                    \
    "        local ev = process.events()\n"                                        \
    "        repeat local e = ev:receive() until e.kind == process.event.CANCEL\n" \
    "      end\n"                                                                  \
    "  - name: crash\n"                                                            \
    "    kind: process.lua\n"                                                      \
    "    source: |\n"                                                              \
    "      return function() error(\"crash\") end\n"                               \
    "  - name: quick\n"                                                            \
    "    kind: process.lua\n"                                                      \
    "    source: |\n"                                                              \
    "      return function() return true end\n"

typedef struct fx {
    uv_loop_t loop;
    uv_timer_t tick;
    char path[64];
    FILE *logf;
    sw_log *log;
    sw_registry *reg;
    sw_runtime *rt;
    sw_supervisor sup;
} fx;

static void on_tick(uv_timer_t *t) { (void)t; }

static fx *fx_open(const char *services)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    char *yaml = malloc(strlen(services) + 4096);
    assert_non_null(yaml);
    sprintf(yaml, "namespace: app\nentries:\n%s%s", PROCESSES, services);
    sw_registry_file file = {"/tmp/sup/app.yaml", yaml, strlen(yaml)};
    sw_diags d;
    sw_diags_init(&d);
    f->reg = sw_registry_load_files("/tmp/sup", &file, 1, &d);
    if (!f->reg) {
        char buf[1024];
        sw_diags_finish(&d);
        for (size_t i = 0; i < d.n; i++) {
            sw_diag_format(&d.v[i], buf, sizeof buf);
            print_message("  diag: %s\n", buf);
        }
        fail_msg("app does not load");
    }
    sw_diags_free(&d);
    free(yaml);

    strcpy(f->path, "/tmp/steward-test-supervisor-XXXXXX");
    int fd = mkstemp(f->path);
    assert_true(fd >= 0);
    f->logf = fdopen(fd, "w");
    f->log = sw_log_new(f->logf, true, SW_LOG_INFO, false);
    sw_runtime_config cfg = {.workers = 2};
    sw_api_use(&cfg);
    f->rt = sw_runtime_new(f->reg, f->log, &cfg);
    assert_non_null(f->rt);
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->tick);
    assert_int_equal(sw_supervisor_init(&f->sup, &f->loop, f->rt, f->reg, f->log), 0);
    sw_supervisor_start(&f->sup);
    return f;
}

/* The whole event log so far (caller frees). */
static char *log_text(fx *f)
{
    FILE *r = fopen(f->path, "rb");
    assert_non_null(r);
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t got;
    while ((got = fread(s + n, 1, cap - n - 1, r)) > 0) {
        n += got;
        if (cap - n < 2) s = realloc(s, cap *= 2);
    }
    s[n] = 0;
    fclose(r);
    return s;
}

static void dump_log(fx *f)
{
    char *s = log_text(f);
    print_message("---- event log ----\n%s-------------------\n", s);
    free(s);
}

/* Offset of the nth (1-based) "service state" event of id with this state, or -1. */
static long event_at(fx *f, const char *id, const char *state, int nth)
{
    char needle[256];
    snprintf(needle, sizeof needle, "\"service\":\"%s\",\"state\":\"%s\"", id, state);
    char *s = log_text(f);
    long at = -1;
    const char *p = s;
    for (int k = 0; (p = strstr(p, needle)) != NULL; p++)
        if (++k == nth) {
            at = p - s;
            break;
        }
    free(s);
    return at;
}

static int count_events(fx *f, const char *id, const char *state)
{
    int n = 0;
    while (event_at(f, id, state, n + 1) >= 0) n++;
    return n;
}

static sw_svc *svc(fx *f, const char *id)
{
    sw_svc *v = sw_supervisor_find(&f->sup, id);
    if (!v) fail_msg("no service %s", id);
    return v;
}

typedef bool (*cond_fn)(fx *f, const void *arg);

/* Runs the loop until cond holds (true) or ms pass (false). A 2 ms tick bounds each wait. */
static bool run_until(fx *f, cond_fn cond, const void *arg, int ms)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)ms * 1000000u;
    uv_timer_start(&f->tick, on_tick, 2, 2);
    bool ok;
    while (!(ok = cond(f, arg)) && uv_hrtime() < deadline) uv_run(&f->loop, UV_RUN_ONCE);
    uv_timer_stop(&f->tick);
    return ok;
}

static bool never(fx *f, const void *arg)
{
    (void)f;
    (void)arg;
    return false;
}

static void run_for(fx *f, int ms) { run_until(f, never, NULL, ms); }

typedef struct want_state {
    const char *id;
    sw_svc_state st;
} want_state;

static bool in_state(fx *f, const void *arg)
{
    const want_state *w = arg;
    return sw_svc_state_of(svc(f, w->id)) == w->st;
}

static void await_state(fx *f, const char *id, sw_svc_state st, int ms)
{
    want_state w = {id, st};
    if (!run_until(f, in_state, &w, ms)) {
        dump_log(f);
        fail_msg("%s: not %s within %d ms (state %s)", id, sw_svc_state_name(st), ms,
                 sw_svc_state_name(sw_svc_state_of(svc(f, id))));
    }
}

typedef struct want_count {
    const char *id, *state;
    int n;
} want_count;

static bool has_count(fx *f, const void *arg)
{
    const want_count *w = arg;
    return count_events(f, w->id, w->state) >= w->n;
}

/* Runs until the log holds n events of id in this state. */
static void await_count(fx *f, const char *id, const char *state, int n, int ms)
{
    want_count w = {id, state, n};
    if (!run_until(f, has_count, &w, ms)) {
        dump_log(f);
        fail_msg("%s: fewer than %d %s events within %d ms", id, n, state, ms);
    }
}

static bool is_waiting(fx *f, const void *arg) { return sw_svc_waiting(svc(f, arg)); }
static bool shut_down(fx *f, const void *arg)
{
    (void)arg;
    return f->sup.done;
}

static void fx_close(fx *f)
{
    sw_supervisor_shutdown(&f->sup);
    if (!run_until(f, shut_down, NULL, 5000)) {
        dump_log(f);
        fail_msg("shutdown did not finish");
    }
    sw_runtime_free(f->rt);
    sw_supervisor_close(&f->sup);
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    sw_log_free(f->log);
    fclose(f->logf);
    unlink(f->path);
    sw_registry_free(f->reg);
    free(f);
}

/* Asserts the events a (state sa, nth na) < b (state sb, nth nb) in the log. */
static void assert_before(fx *f, const char *a, const char *sa, int na, const char *b,
                          const char *sb, int nb)
{
    long pa = event_at(f, a, sa, na), pb = event_at(f, b, sb, nb);
    if (pa < 0 || pb < 0 || pa >= pb) {
        dump_log(f);
        fail_msg("expected %s %s #%d before %s %s #%d (at %ld, %ld)", a, sa, na, b, sb, nb, pa, pb);
    }
}

/* ---- scenario 5: an explicit stop is terminal ---- */

static void test_stop_one_always_stays_stopped(void **state)
{
    (void)state;
    fx *f = fx_open("  - name: a\n"
                    "    kind: process.service\n"
                    "    process: wait_cancel\n"
                    "    lifecycle:\n"
                    "      auto_start: true\n"
                    "      restart: { policy: always, initial_delay: 10ms, jitter: 0 }\n");
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    run_for(f, 20);
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    await_state(f, "app:a", SW_SVC_STOPPED, 2000);
    run_for(f, 150); /* ten times the restart delay */
    sw_svc *a = svc(f, "app:a");
    assert_int_equal(sw_svc_state_of(a), SW_SVC_STOPPED);
    assert_int_equal(a->pid, 0);
    assert_false(sw_svc_waiting(a));
    assert_string_equal(a->reason, "stopped");
    assert_int_equal(count_events(f, "app:a", "starting"), 1);
    assert_int_equal(count_events(f, "app:a", "stopping"), 1);
    assert_int_equal(count_events(f, "app:a", "stopped"), 1);
    /* a second stop of a stopped service changes nothing */
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    run_for(f, 20);
    assert_int_equal(count_events(f, "app:a", "stopped"), 1);
    fx_close(f);
}

/* A process that ignores CANCEL: only a kill ends it. */
#define STUBBORN              \
    "  - name: stubborn\n"    \
    "    kind: process.lua\n" \
    "    source: |\n"         \
    "      return function() while true do time.sleep(\"1s\") end end\n"

/* An always service that ignores CANCEL: killed after stop_timeout, then it stays stopped. */
static void test_stop_one_kills_after_stop_timeout(void **state)
{
    (void)state;
    fx *f = fx_open(STUBBORN "  - name: a\n"
                             "    kind: process.service\n"
                             "    process: stubborn\n"
                             "    lifecycle:\n"
                             "      auto_start: true\n"
                             "      stop_timeout: 60ms\n"
                             "      restart: { policy: always, initial_delay: 10ms, jitter: 0 }\n");
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    assert_int_equal(sw_svc_state_of(svc(f, "app:a")), SW_SVC_STOPPING);
    await_state(f, "app:a", SW_SVC_STOPPED, 3000);
    assert_true(uv_hrtime() - t0 >= 55 * SW_NS_PER_MS);
    assert_string_equal(svc(f, "app:a")->reason, "killed after stop_timeout");
    run_for(f, 100);
    assert_int_equal(sw_svc_state_of(svc(f, "app:a")), SW_SVC_STOPPED);
    assert_int_equal(count_events(f, "app:a", "starting"), 1);
    fx_close(f);
}

/* Stop timeouts share a timer per stop_timeout value (host/supervisor/stop_wave.c): services
 * stopped together with different ones are each killed at their own. */
static void test_stop_timeouts_of_one_wave(void **state)
{
    (void)state;
    fx *f = fx_open(STUBBORN "  - name: a\n"
                             "    kind: process.service\n"
                             "    process: stubborn\n"
                             "    lifecycle: { auto_start: true, stop_timeout: 60ms }\n"
                             "  - name: b\n"
                             "    kind: process.service\n"
                             "    process: stubborn\n"
                             "    lifecycle: { auto_start: true, stop_timeout: 400ms }\n"
                             "  - name: c\n"
                             "    kind: process.service\n"
                             "    process: stubborn\n"
                             "    lifecycle: { auto_start: true, stop_timeout: 60ms }\n");
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    await_state(f, "app:b", SW_SVC_RUNNING, 2000);
    await_state(f, "app:c", SW_SVC_RUNNING, 2000);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:b"), 0);
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:c"), 0);
    await_state(f, "app:a", SW_SVC_STOPPED, 3000);
    await_state(f, "app:c", SW_SVC_STOPPED, 3000);
    assert_true(uv_hrtime() - t0 >= 55 * SW_NS_PER_MS);
    assert_string_equal(svc(f, "app:a")->reason, "killed after stop_timeout");
    assert_string_equal(svc(f, "app:c")->reason, "killed after stop_timeout");
    if (uv_hrtime() - t0 < 300 * SW_NS_PER_MS) /* else a loaded machine: b's may be over too */
        assert_int_equal(sw_svc_state_of(svc(f, "app:b")), SW_SVC_STOPPING);
    await_state(f, "app:b", SW_SVC_STOPPED, 3000);
    assert_true(uv_hrtime() - t0 >= 395 * SW_NS_PER_MS);
    assert_string_equal(svc(f, "app:b")->reason, "killed after stop_timeout");
    fx_close(f);
}

/* ---- scenario 12: no second instance while waiting out the backoff ---- */

static void test_start_one_during_backoff(void **state)
{
    (void)state;
    fx *f = fx_open(
        "  - name: c\n"
        "    kind: process.service\n"
        "    process: crash\n"
        "    lifecycle:\n"
        "      auto_start: true\n"
        "      restart: { policy: always, initial_delay: 150ms, backoff_factor: 2, jitter: 0 }\n");
    if (!run_until(f, is_waiting, "app:c", 2000)) fail_msg("no backoff");
    sw_svc *c = svc(f, "app:c");
    assert_int_equal(sw_svc_state_of(c), SW_SVC_FAILED);
    assert_int_equal(count_events(f, "app:c", "starting"), 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sw_supervisor_start_one(&f->sup, "app:c"), 0);
        run_for(f, 10);
        assert_true(sw_svc_waiting(c));
        assert_int_equal(c->pid, 0);
        assert_int_equal(count_events(f, "app:c", "starting"), 1);
    }
    /* the scheduled attempt still comes, once, and the counter was not reset by the request */
    await_count(f, "app:c", "failed", 2, 3000);
    assert_int_equal(count_events(f, "app:c", "starting"), 2);
    char *log = log_text(f);
    assert_non_null(
        strstr(log, "\"attempt\":1,\"reason\":\"app:crash:1: crash\",\"next_attempt\":0.15"));
    assert_non_null(
        strstr(log, "\"attempt\":2,\"reason\":\"app:crash:1: crash\",\"next_attempt\":0.3"));
    free(log);
    fx_close(f);
}

/* ---- stopping one stops its dependents first; starting one starts its dependencies ---- */

#define CHAIN                                                                                  \
    "  - name: c\n"                                                                            \
    "    kind: process.service\n"                                                              \
    "    process: wait_cancel\n"                                                               \
    "    lifecycle: { restart: { policy: always, initial_delay: 10ms } }\n"                    \
    "  - name: b\n"                                                                            \
    "    kind: process.service\n"                                                              \
    "    process: wait_cancel\n"                                                               \
    "    lifecycle: { depends_on: [ c ], restart: { policy: always, initial_delay: 10ms } }\n" \
    "  - name: a\n"                                                                            \
    "    kind: process.service\n"                                                              \
    "    process: wait_cancel\n"                                                               \
    "    lifecycle: { auto_start: true, depends_on: [ b ], restart: { policy: always, "        \
    "initial_delay: 10ms } }\n"                                                                \
    "  - name: d\n"                                                                            \
    "    kind: process.service\n"                                                              \
    "    process: wait_cancel\n"                                                               \
    "    lifecycle: { auto_start: true }\n"

static void test_stop_one_stops_dependents_first(void **state)
{
    (void)state;
    fx *f = fx_open(CHAIN);
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    await_state(f, "app:d", SW_SVC_RUNNING, 2000);
    uint64_t d_pid = svc(f, "app:d")->pid;
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:c"), 0);
    await_state(f, "app:c", SW_SVC_STOPPED, 3000);
    run_for(f, 100);
    const char *ids[] = {"app:a", "app:b", "app:c"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sw_svc_state_of(svc(f, ids[i])), SW_SVC_STOPPED);
        assert_int_equal(svc(f, ids[i])->pid, 0);
        assert_int_equal(count_events(f, ids[i], "starting"), 1);
    }
    assert_before(f, "app:a", "stopped", 1, "app:b", "stopping", 1);
    assert_before(f, "app:b", "stopped", 1, "app:c", "stopping", 1);
    /* the unrelated service is untouched */
    assert_int_equal(sw_svc_state_of(svc(f, "app:d")), SW_SVC_RUNNING);
    assert_int_equal(svc(f, "app:d")->pid, d_pid);

    /* starting a by hand starts what it needs first: c, then b, then a */
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:a"), 0);
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    assert_int_equal(sw_svc_state_of(svc(f, "app:b")), SW_SVC_RUNNING);
    assert_int_equal(sw_svc_state_of(svc(f, "app:c")), SW_SVC_RUNNING);
    assert_before(f, "app:c", "running", 2, "app:b", "starting", 2);
    assert_before(f, "app:b", "running", 2, "app:a", "starting", 2);
    /* starting a running one is a no-op */
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:b"), 0);
    run_for(f, 20);
    assert_int_equal(count_events(f, "app:b", "starting"), 2);
    fx_close(f);
}

/* Stopping the middle of the chain leaves its own dependency running. */
static void test_stop_one_middle(void **state)
{
    (void)state;
    fx *f = fx_open(CHAIN);
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    uint64_t c_pid = svc(f, "app:c")->pid;
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:b"), 0);
    await_state(f, "app:b", SW_SVC_STOPPED, 3000);
    run_for(f, 50);
    assert_int_equal(sw_svc_state_of(svc(f, "app:a")), SW_SVC_STOPPED);
    assert_before(f, "app:a", "stopped", 1, "app:b", "stopping", 1);
    assert_int_equal(sw_svc_state_of(svc(f, "app:c")), SW_SVC_RUNNING);
    assert_int_equal(svc(f, "app:c")->pid, c_pid);
    fx_close(f);
}

/* Restarting the middle of the chain: a (its dependent) stops first, b after; then b starts
 * again, and a after it; c and d keep their pids. */
static void test_restart_one_restarts_dependents_after(void **state)
{
    (void)state;
    fx *f = fx_open(CHAIN);
    await_state(f, "app:a", SW_SVC_RUNNING, 2000);
    await_state(f, "app:d", SW_SVC_RUNNING, 2000);
    uint64_t c_pid = svc(f, "app:c")->pid, d_pid = svc(f, "app:d")->pid,
             b_pid = svc(f, "app:b")->pid;
    assert_int_equal(sw_supervisor_restart_one(&f->sup, "app:b"), 0);
    await_count(f, "app:a", "running", 2, 3000);
    assert_before(f, "app:a", "stopped", 1, "app:b", "stopping", 1);
    assert_before(f, "app:b", "stopped", 1, "app:b", "starting", 2);
    assert_before(f, "app:b", "running", 2, "app:a", "starting", 2);
    assert_int_equal(sw_svc_state_of(svc(f, "app:b")), SW_SVC_RUNNING);
    assert_true(svc(f, "app:b")->pid != b_pid);
    assert_int_equal(svc(f, "app:b")->restarts, 1);
    assert_int_equal(svc(f, "app:c")->pid, c_pid);
    assert_int_equal(svc(f, "app:d")->pid, d_pid);
    assert_int_equal(sw_supervisor_restart_one(&f->sup, "app:nope"), -1);
    fx_close(f);
}

/* ---- scenario 3, by hand: a `never` service that ended starts again when asked ---- */

static void test_start_one_never_service_again(void **state)
{
    (void)state;
    fx *f = fx_open("  - name: n\n"
                    "    kind: process.service\n"
                    "    process: quick\n"
                    "    lifecycle:\n"
                    "      auto_start: true\n"
                    "      restart: { policy: never, initial_delay: 0 }\n"
                    "  - name: m\n"
                    "    kind: process.service\n"
                    "    process: crash\n"
                    "    lifecycle:\n"
                    "      auto_start: true\n"
                    "      restart: { policy: never, initial_delay: 0 }\n");
    await_state(f, "app:n", SW_SVC_STOPPED, 2000);
    await_state(f, "app:m", SW_SVC_FAILED, 2000);
    run_for(f, 50);
    assert_int_equal(count_events(f, "app:n", "starting"), 1);
    assert_int_equal(count_events(f, "app:m", "starting"), 1);
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:n"), 0);
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:m"), 0);
    await_count(f, "app:n", "stopped", 2, 3000);
    await_count(f, "app:m", "failed", 2, 3000);
    run_for(f, 50);
    assert_int_equal(count_events(f, "app:n", "starting"), 2);
    assert_int_equal(count_events(f, "app:m", "starting"), 2);
    assert_int_equal(sw_svc_state_of(svc(f, "app:n")), SW_SVC_STOPPED);
    assert_int_equal(sw_svc_state_of(svc(f, "app:m")), SW_SVC_FAILED);
    fx_close(f);
}

static void test_unknown_ids(void **state)
{
    (void)state;
    fx *f = fx_open("  - name: a\n"
                    "    kind: process.service\n"
                    "    process: wait_cancel\n");
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:nope"), -1);
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:nope"), -1);
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:wait_cancel"), -1); /* not a service */
    assert_int_equal(sw_svc_state_of(svc(f, "app:a")), SW_SVC_INACTIVE);       /* not auto_start */
    fx_close(f);
}

/* Scenario 11/50: an explicit initial_delay of 0 stays 0 however many failures came before
 * (0 * 2^1024 is NaN in doubles, which once turned into max_delay). */
static void test_zero_delay_never_grows(void **state)
{
    (void)state;
    sw_restart r = {.initial_delay_ns = 0,
                    .max_delay_ns = 90 * SW_NS_PER_S,
                    .backoff_factor = 2,
                    .jitter = 0.1};
    for (int64_t n = 1; n <= 5000; n += 7) assert_int_equal(sw_backoff_delay(&r, n, 0.9), 0);
    r.initial_delay_ns = 40 * SW_NS_PER_MS;
    assert_int_equal(sw_backoff_delay(&r, 5000, 0.5), 90 * SW_NS_PER_S);
}

/* ---- the sub-states and their public view ---- */

static void test_sub_state_views(void **state)
{
    (void)state;
    static const struct {
        sw_svc_sub sub;
        sw_svc_state st;
    } views[] = {
        {SW_SUB_INACTIVE, SW_SVC_INACTIVE},
        {SW_SUB_BLOCKED, SW_SVC_INACTIVE},
        {SW_SUB_INACTIVE_FOR_GOOD, SW_SVC_INACTIVE},
        {SW_SUB_AWAIT_STANDBY, SW_SVC_STARTING},
        {SW_SUB_STARTING, SW_SVC_STARTING},
        {SW_SUB_START_TIMED_OUT, SW_SVC_STARTING},
        {SW_SUB_STARTING_KILLED, SW_SVC_STARTING},
        {SW_SUB_RUNNING, SW_SVC_RUNNING},
        {SW_SUB_RUNNING_KILLED, SW_SVC_RUNNING},
        {SW_SUB_RUNNING_FAILED, SW_SVC_RUNNING},
        {SW_SUB_STOPPING, SW_SVC_STOPPING},
        {SW_SUB_STOPPING_KILLED, SW_SVC_STOPPING},
        {SW_SUB_ENDING, SW_SVC_STOPPING},
        {SW_SUB_ENDING_KILLED, SW_SVC_STOPPING},
        {SW_SUB_BACKOFF_STOPPED, SW_SVC_STOPPED},
        {SW_SUB_BACKOFF_FAILED, SW_SVC_FAILED},
        {SW_SUB_STOPPED, SW_SVC_STOPPED},
        {SW_SUB_FAILED, SW_SVC_FAILED},
        {SW_SUB_STOPPED_FOR_GOOD, SW_SVC_STOPPED},
        {SW_SUB_FAILED_FOR_GOOD, SW_SVC_FAILED},
        {SW_SUB_DISCARDED, SW_SVC_STOPPED},
    };
    assert_int_equal(sizeof views / sizeof views[0], SW_SUB_DISCARDED + 1);
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        assert_int_equal(sw_svc_view(views[i].sub), views[i].st);
}

/* A stop by hand reaches a service whose dependent is still stopping: if it ends by itself
 * before its CANCEL comes, that end is final (its own reason, no restart). */
static void test_stop_one_own_end_before_cancel_is_final(void **state)
{
    (void)state;
    fx *f =
        fx_open("  - name: late_crash\n"
                "    kind: process.lua\n"
                "    source: |\n"
                "      return function() time.sleep(\"300ms\"); error(\"late\") end\n" STUBBORN
                "  - name: a\n"
                "    kind: process.service\n"
                "    process: late_crash\n"
                "    lifecycle:\n"
                "      auto_start: true\n"
                "      restart: { policy: always, initial_delay: 10ms, jitter: 0 }\n"
                "  - name: b\n"
                "    kind: process.service\n"
                "    process: stubborn\n"
                "    lifecycle: { auto_start: true, depends_on: [ a ], stop_timeout: 900ms }\n");
    await_state(f, "app:b", SW_SVC_RUNNING, 2000);
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    sw_svc *a = svc(f, "app:a"), *b = svc(f, "app:b");
    assert_int_equal(b->sub, SW_SUB_STOPPING);
    assert_int_equal(a->sub, SW_SUB_RUNNING); /* waits for its dependent */
    assert_true(sw_svc_for_good(a));
    await_state(f, "app:a", SW_SVC_FAILED, 2000);
    assert_int_equal(a->sub, SW_SUB_FAILED_FOR_GOOD);
    assert_non_null(strstr(a->reason, "late"));
    assert_int_equal(sw_svc_state_of(b), SW_SVC_STOPPING);
    await_state(f, "app:b", SW_SVC_STOPPED, 3000);
    assert_int_equal(b->sub, SW_SUB_STOPPED_FOR_GOOD);
    assert_string_equal(b->reason, "killed after stop_timeout");
    run_for(f, 50);
    assert_int_equal(count_events(f, "app:a", "starting"), 1);
    assert_int_equal(count_events(f, "app:b", "starting"), 1);
    fx_close(f);
}

/* A group that fails is logged with the attempt that failed, before its parent counts the
 * next one (at the root and nested). */
static void test_group_failure_logged_with_its_attempt(void **state)
{
    (void)state;
    fx *f = fx_open(
        "  - name: m\n"
        "    kind: process.service\n"
        "    process: crash\n"
        "    lifecycle: { restart: { policy: always, initial_delay: 10ms, jitter: 0 } }\n"
        "  - name: g\n"
        "    kind: service.group\n"
        "    intensity: 0\n"
        "    children: [ m ]\n"
        "    lifecycle: { auto_start: true, restart: { policy: on_failure, initial_delay: 40ms, "
        "jitter: 0 } }\n"
        "  - name: w\n"
        "    kind: process.service\n"
        "    process: crash\n"
        "    lifecycle: { restart: { policy: always, initial_delay: 10ms, jitter: 0 } }\n"
        "  - name: q\n"
        "    kind: service.group\n"
        "    strategy: one_for_all\n"
        "    intensity: 0\n"
        "    children: [ w ]\n"
        "    lifecycle: { restart: { policy: on_failure, initial_delay: 40ms, jitter: 0 } }\n"
        "  - name: p\n"
        "    kind: service.group\n"
        "    children: [ q ]\n"
        "    lifecycle: { auto_start: true }\n");
    await_count(f, "app:g", "failed", 2, 3000);
    await_count(f, "app:q", "failed", 2, 3000);
    char *log = log_text(f);
    assert_non_null(strstr(log, "\"service\":\"app:g\",\"state\":\"failed\",\"attempt\":1,"));
    assert_non_null(strstr(log, "\"service\":\"app:g\",\"state\":\"failed\",\"attempt\":2,"));
    assert_non_null(strstr(log, "\"service\":\"app:q\",\"state\":\"failed\",\"attempt\":1,"));
    assert_non_null(strstr(log, "\"service\":\"app:q\",\"state\":\"failed\",\"attempt\":2,"));
    free(log);
    fx_close(f);
}

/* ---- the change subscription ---- */

typedef struct watcher {
    sw_supervisor *sup;
    int calls, depth, max_depth;
    const char *start_on_call; /* a request made from inside the subscriber, once */
} watcher;

static void on_change(void *arg)
{
    watcher *w = arg;
    w->calls++;
    if (++w->depth > w->max_depth) w->max_depth = w->depth;
    const char *id = w->start_on_call;
    w->start_on_call = NULL;
    if (id) assert_int_equal(sw_supervisor_start_one(w->sup, id), 0);
    w->depth--;
}

static void test_change_subscription(void **state)
{
    (void)state;
    fx *f = fx_open("  - name: a\n"
                    "    kind: process.service\n"
                    "    process: wait_cancel\n"
                    "  - name: b\n"
                    "    kind: process.service\n"
                    "    process: wait_cancel\n");
    watcher w = {.sup = &f->sup};
    sw_supervisor_on_change(&f->sup, on_change, &w);
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:a"), 0);
    assert_int_equal(w.calls, 1); /* once, at the end of the request */
    assert_int_equal(sw_svc_state_of(svc(f, "app:a")), SW_SVC_RUNNING);
    assert_int_equal(sw_supervisor_start_one(&f->sup, "app:a"),
                     0); /* runs already: nothing changes */
    assert_int_equal(w.calls, 1);
    w.start_on_call = "app:b";
    assert_int_equal(sw_supervisor_stop_one(&f->sup, "app:a"), 0);
    assert_int_equal(w.calls,
                     3); /* the request made from the subscriber is told by a further call */
    assert_int_equal(w.max_depth, 1);
    assert_int_equal(sw_svc_state_of(svc(f, "app:b")), SW_SVC_RUNNING);
    await_state(f, "app:a", SW_SVC_STOPPED, 2000);
    assert_true(w.calls >= 4); /* the end of a's run, a batch of worker messages */
    sw_supervisor_on_change(&f->sup, NULL, NULL);
    fx_close(f);
}

/* ---- the shutdown's order at scale (docs/supervision.md "Stopping and shutdown") ---- */

enum { DAG_LEVELS = 5, DAG_WIDTH = 8 };

/* dL_i depends on d(L-1)_i and d(L-1)_((3i+1) % WIDTH); d2_0 is a one-shot that returns. */
static size_t dag_dep(int i, int k) { return k == 0 ? (size_t)i : (size_t)(3 * i + 1) % DAG_WIDTH; }

static bool dag_one_shot(int level, int i) { return level == 2 && i == 0; }

/* Every service stopped before any of its dependencies got its CANCEL; through a one-shot
 * that had already returned, too: its dependents stopped before its dependencies (top, slow
 * to stop, before db). */
static void test_shutdown_order_of_a_dag(void **state)
{
    (void)state;
    char *yaml = malloc(64 * 1024), *p = yaml;
    p += sprintf(p, "  - name: nap\n    kind: process.lua\n"
                    "    source: \"return function() time.sleep(0.2) end\"\n");
    /* beside the DAG: db <- mid (a one-shot) <- top, top slow to stop: db waits for it */
    p += sprintf(p, "  - name: slow_stop\n    kind: process.lua\n    source: |\n"
                    "      return function()\n"
                    "        repeat local e = process.events():receive() until e.kind == "
                    "process.event.CANCEL\n"
                    "        time.sleep(0.3)\n"
                    "      end\n"
                    "  - { name: db, kind: process.service, process: wait_cancel,\n"
                    "      lifecycle: { auto_start: true } }\n"
                    "  - { name: mid, kind: process.service, process: nap,\n"
                    "      lifecycle: { auto_start: true, restart: { policy: never },\n"
                    "                   depends_on: [ db ] } }\n"
                    "  - { name: top, kind: process.service, process: slow_stop,\n"
                    "      lifecycle: { auto_start: true, depends_on: [ mid ] } }\n");
    for (int l = 0; l < DAG_LEVELS; l++)
        for (int i = 0; i < DAG_WIDTH; i++) {
            p += sprintf(p, "  - name: d%d_%d\n    kind: process.service\n    process: %s\n", l, i,
                         dag_one_shot(l, i) ? "nap" : "wait_cancel");
            p += sprintf(p, "    lifecycle: { auto_start: true%s",
                         dag_one_shot(l, i) ? ", restart: { policy: never }" : "");
            if (l > 0)
                p += sprintf(p, ", depends_on: [ d%d_%zu, d%d_%zu ]", l - 1, dag_dep(i, 0), l - 1,
                             dag_dep(i, 1));
            p += sprintf(p, " }\n");
        }
    fx *f = fx_open(yaml);
    free(yaml);
    char id[64], dep[64];
    for (int i = 0; i < DAG_WIDTH; i++) {
        snprintf(id, sizeof id, "app:d%d_%d", DAG_LEVELS - 1, i);
        await_state(f, id, SW_SVC_RUNNING, 5000);
    }
    await_state(f, "app:d2_0", SW_SVC_STOPPED, 3000);
    await_state(f, "app:top", SW_SVC_RUNNING, 3000);
    await_state(f, "app:mid", SW_SVC_STOPPED, 3000);
    sw_supervisor_shutdown(&f->sup);
    if (!run_until(f, shut_down, NULL, 5000)) {
        dump_log(f);
        fail_msg("shutdown did not finish");
    }
    for (int l = 1; l < DAG_LEVELS; l++)
        for (int i = 0; i < DAG_WIDTH; i++) {
            if (dag_one_shot(l, i)) continue;
            snprintf(id, sizeof id, "app:d%d_%d", l, i);
            for (int k = 0; k < 2; k++) {
                int d = (int)dag_dep(i, k);
                if (!dag_one_shot(l - 1, d)) {
                    snprintf(dep, sizeof dep, "app:d%d_%d", l - 1, d);
                    assert_before(f, id, "stopped", 1, dep, "stopping", 1);
                    continue;
                }
                for (int m = 0; m < 2; m++) { /* through the one-shot, down already */
                    snprintf(dep, sizeof dep, "app:d%d_%zu", l - 2, dag_dep(d, m));
                    assert_before(f, id, "stopped", 1, dep, "stopping", 1);
                }
            }
        }
    assert_int_equal(count_events(f, "app:d2_0", "stopping"), 0);
    assert_before(f, "app:top", "stopped", 1, "app:db", "stopping", 1);
    fx_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_one_always_stays_stopped),
        cmocka_unit_test(test_stop_one_kills_after_stop_timeout),
        cmocka_unit_test(test_stop_timeouts_of_one_wave),
        cmocka_unit_test(test_start_one_during_backoff),
        cmocka_unit_test(test_stop_one_stops_dependents_first),
        cmocka_unit_test(test_stop_one_middle),
        cmocka_unit_test(test_restart_one_restarts_dependents_after),
        cmocka_unit_test(test_start_one_never_service_again),
        cmocka_unit_test(test_unknown_ids),
        cmocka_unit_test(test_zero_delay_never_grows),
        cmocka_unit_test(test_sub_state_views),
        cmocka_unit_test(test_stop_one_own_end_before_cancel_is_final),
        cmocka_unit_test(test_group_failure_logged_with_its_attempt),
        cmocka_unit_test(test_change_subscription),
        cmocka_unit_test(test_shutdown_order_of_a_dag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
