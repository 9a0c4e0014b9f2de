/* Supervisor benchmarks, each printed with its target and a baseline from the same run:
 *  - restart throughput: a service that fails at once, zero backoff, counted over a run of
 *    restarts; the first and last 10,000 (1,000 in short runs) are timed apart to show it stays flat;
 *    then again with 10,000 idle services running beside it (flat in the host's size too);
 *  - beside the plain restart, in the same run: a service whose process spawns 10 children
 *    each run (its tree is ended before each restart: docs/supervision.md "A service owns its
 *    processes"), and a child restarted by a supervisor in Lua (the `supervisor` module);
 *  - cold start and shutdown: 1,000, 10,000 and 100,000 services in a dependency DAG 10 levels
 *    deep, from start to all running and from the shutdown signal to all stopped, with the CPU
 *    time of the supervisor's thread; the baseline is the smallest size: linear when the
 *    larger take no more than their multiple of its time.
 * usage: bench_supervisor [RESTARTS] [RESTARTS_BESIDE] [SIZE...] (0 skips a part) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "api.h"
#include "supervisor.h"

/* CPU time of the calling thread: the supervisor's loop runs on it. Less sensitive to the
 * machine's load than the wall clock, and it leaves out the workers. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *s)
{
    size_t len = strlen(s);
    if (t->n + len + 1 > t->cap) {
        t->cap = (t->n + len + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    memcpy(t->s + t->n, s, len + 1);
    t->n += len;
}

/* ---- polling the supervisor from its own loop ---- */

typedef struct probe {
    sw_supervisor *sup;
    uv_timer_t timer;
    int64_t target; /* restarts to reach, or services to see running */
    int64_t window; /* restarts timed at the start and at the end */
    double t_start, t_first, t_last_start, t_done;
    double cpu_start, cpu_done, cpu_end; /* the loop thread's CPU time at start, done, end */
    bool shutdown_sent;
    int mode;      /* 0 restarts, 1 start-all then shutdown, 2 until the one service stops */
    size_t cursor; /* mode 1: the services before it run */
} probe;

static void on_probe(uv_timer_t *t)
{
    probe *p = t->data;
    sw_supervisor *s = p->sup;
    if (p->mode == 0) {
        int64_t a = (int64_t)s->svcs[0]->restarts;
        if (a >= p->window && p->t_first == 0) p->t_first = bench_now();
        if (a >= p->target - p->window && p->t_last_start == 0) p->t_last_start = bench_now();
        if (a >= p->target) {
            p->t_done = bench_now();
            uv_timer_stop(t);
            sw_supervisor_shutdown(s);
        }
        return;
    }
    if (p->mode == 2) {
        if (sw_svc_state_of(s->svcs[0]) != SW_SVC_STOPPED) return;
        p->t_done = bench_now();
        uv_timer_stop(t);
        sw_supervisor_shutdown(s);
        return;
    }
    if (p->shutdown_sent) return;
    /* A service that runs keeps running until the shutdown: the scan resumes where it stopped,
     * so probing costs O(1) a tick, not O(services) (it shares the supervisor's loop). */
    while (p->cursor < s->n && sw_svc_state_of(s->svcs[p->cursor]) == SW_SVC_RUNNING) p->cursor++;
    if ((int64_t)p->cursor == p->target) {
        p->t_done = bench_now();
        p->cpu_done = thread_cpu();
        p->shutdown_sent = true;
        uv_timer_stop(t);
        sw_supervisor_shutdown(s);
    }
}

static double run_files(char *const *yamls, size_t n, int mode, int64_t target, probe *out)
{
    sw_registry *reg = bench_load_files(yamls, n);
    /* Every transition is formatted as in production; the lines go to /dev/null, not a terminal. */
    FILE *sink = fopen("/dev/null", "w");
    sw_log *log = sw_log_new(sink, false, SW_LOG_INFO, false);
    sw_runtime_config cfg = {0};
    cfg.limits.processes = 1000000; /* room for 100,000 services */
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, log, &cfg);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sw_supervisor sup;
    sw_supervisor_init(&sup, &loop, rt, reg, log);
    probe p = {
        .sup = &sup, .target = target, .mode = mode, .window = target >= 50000 ? 10000 : 1000};
    uv_timer_init(&loop, &p.timer);
    p.timer.data = &p;
    uv_timer_start(&p.timer, on_probe, 0, 1);
    p.t_start = bench_now();
    p.cpu_start = thread_cpu();
    sw_supervisor_start(&sup);
    uv_run(&loop, UV_RUN_DEFAULT);
    double end = bench_now();
    p.cpu_end = thread_cpu();
    uv_close((uv_handle_t *)&p.timer, NULL);
    sw_runtime_free(rt);
    sw_supervisor_close(&sup);
    uv_loop_close(&loop);
    sw_log_free(log);
    fclose(sink);
    sw_registry_free(reg);
    *out = p;
    return end;
}

static double run(const char *yaml, int mode, int64_t target, probe *out)
{
    char *one = (char *)yaml;
    return run_files(&one, 1, mode, target, out);
}

/* The plain failing service again, with `others` idle services running beside it: a restart
 * should cost the same in a host of 10,000 services as alone (linear in the host's size). The
 * rate after the first window, leaving out the others' start; alone is the plain one's. */
static void restarts_among(int64_t n, int others, double alone)
{
    text t = {0};
    put(&t,
        "namespace: b\nentries:\n"
        "  - { name: crash, kind: process.lua, source: \"return function() error('boom') end\" }\n"
        "  - name: svc\n    kind: process.service\n    process: crash\n"
        "    lifecycle: { auto_start: true, restart: { initial_delay: 0, max_delay: 0, jitter: "
        "0 } }\n"
        "  - name: serve\n    kind: process.lua\n    source: |\n"
        "      return function()\n"
        "        repeat local e = process.events():receive() until e.kind == "
        "process.event.CANCEL\n"
        "      end\n");
    char line[160];
    for (int i = 0; i < others; i++) {
        snprintf(line, sizeof line,
                 "  - { name: o%d, kind: process.service, process: serve, lifecycle: { "
                 "auto_start: true } }\n",
                 i);
        put(&t, line);
    }
    probe p;
    run(t.s, 0, n, &p);
    free(t.s);
    double rate = (double)(n - p.window) / (p.t_done - p.t_first);
    printf("  the same with %d other services running: %.0f restarts/s (ratio %.2f to alone: "
           "flat in the host's size stays near 1)\n",
           others, rate, rate / alone);
}

static void restarts(int64_t n)
{
    const char *yaml =
        "namespace: b\nentries:\n"
        "  - { name: crash, kind: process.lua, source: \"return function() error('boom') end\" }\n"
        "  - name: svc\n    kind: process.service\n    process: crash\n"
        "    lifecycle: { auto_start: true, restart: { initial_delay: 0, max_delay: 0, jitter: 0 } "
        "}\n";
    probe p;
    run(yaml, 0, n, &p);
    double total = p.t_done - p.t_start, first = p.t_first - p.t_start,
           last = p.t_done - p.t_last_start;
    printf("restarts: %lld restarts of a failing service in %.2f s = %.0f restarts/s (target >= "
           "40000)\n",
           (long long)n, total, n / total);
    double w = (double)p.window;
    printf("  first %.0f: %.0f restarts/s; last %.0f: %.0f restarts/s (flat: the ratio stays near "
           "1; %.2f)\n",
           w, w / first, w, w / last, (w / last) / (w / first));
    restarts_among(n, 10000, (double)(n - p.window) / (p.t_done - p.t_first));
}

/* The restarts/s of the service in yaml (its first), zero backoff, over n restarts. */
static double service_restart_rate(const char *yaml, int64_t n)
{
    probe p;
    run(yaml, 0, n, &p);
    return (double)n / (p.t_done - p.t_start);
}

#define ZERO_BACKOFF "restart: { initial_delay: 0, max_delay: 0, jitter: 0 }"

/* Beside the plain restart of a failing service, in the same run: the same with 10 children
 * spawned by each run (they wait for their CANCEL), and a child restarted by a supervisor in
 * Lua (zero backoff; its caller polls the count and returns at n: the service's stop ends the
 * timing). */
static void restarts_beside(int64_t n)
{
    const char *plain =
        "namespace: b\nentries:\n"
        "  - { name: crash, kind: process.lua, source: \"return function() error('boom') end\" }\n"
        "  - name: svc\n    kind: process.service\n    process: crash\n"
        "    lifecycle: { auto_start: true, " ZERO_BACKOFF " }\n";
    const char *tree =
        "namespace: b\nentries:\n"
        "  - name: child\n    kind: process.lua\n    source: |\n"
        "      return function()\n"
        "        repeat local e = process.events():receive() until e.kind == process.event.CANCEL\n"
        "      end\n"
        "  - name: crash\n    kind: process.lua\n    source: |\n"
        "      return function()\n"
        "        for i = 1, 10 do assert(process.spawn('child')) end\n"
        "        error('boom')\n"
        "      end\n"
        "  - name: svc\n    kind: process.service\n    process: crash\n"
        "    lifecycle: { auto_start: true, " ZERO_BACKOFF " }\n";
    char lua[1024];
    snprintf(lua, sizeof lua,
             "namespace: b\nentries:\n"
             "  - { name: crash, kind: process.lua, source: \"return function() error('boom') "
             "end\" }\n"
             "  - name: boss\n    kind: process.lua\n    source: |\n"
             "      return function()\n"
             "        local sup = supervisor.start { intensity = %lld, period = '1s',\n"
             "          restart = { initial_delay = 0, max_delay = 0, jitter = 0 } }\n"
             "        assert(sup:start_child('crash'))\n"
             "        repeat time.sleep('5ms') until sup:which_children()[1].restarts >= %lld\n"
             "      end\n"
             "  - name: svc\n    kind: process.service\n    process: boss\n"
             "    lifecycle: { auto_start: true, restart: { policy: on_failure } }\n",
             (long long)n * 2, (long long)n);
    double base = service_restart_rate(plain, n);
    double spawning = service_restart_rate(tree, n);
    probe p;
    run(lua, 2, 0, &p);
    double sup = (double)n / (p.t_done - p.t_start);
    double base2 = service_restart_rate(plain, n);
    printf("restarts beside the plain service restart (%lld each; plain measured before and after: "
           "%.0f, %.0f restarts/s):\n",
           (long long)n, base, base2);
    base = (base + base2) / 2;
    printf("  a service spawning 10 children each run: %.0f restarts/s (ratio %.2f)\n", spawning,
           spawning / base);
    printf("  a child under a supervisor in Lua: %.0f restarts/s (ratio %.2f)\n", sup, sup / base);
}

/* n services in a dependency DAG 10 levels deep (each depends on two of the level below),
 * from start to all running and from the shutdown signal to all stopped; returns both in ms. */
static void cold_start_ms(int n, double *up_ms, double *down_ms, double *up_cpu, double *down_cpu)
{
    enum { PER_FILE = 10000, MAX_FILES = 64 };
    text files[MAX_FILES] = {{0}};
    size_t n_files = 1;
    put(&files[0],
        "namespace: b\nentries:\n"
        "  - name: serve\n    kind: process.lua\n    source: |\n"
        "      return function()\n"
        "        repeat local e = process.events():receive() until e.kind == process.event.CANCEL\n"
        "      end\n");
    char line[256];
    srand(1);
    int per_level = n / 10;
    for (int i = 0; i < n; i++) {
        text *t = &files[i / PER_FILE];
        if (i % PER_FILE == 0 && i > 0) put(t, "namespace: b\nentries:\n");
        n_files = (size_t)(i / PER_FILE) + 1;
        int level = i / per_level;
        snprintf(line, sizeof line,
                 "  - name: s%d\n    kind: process.service\n    process: serve\n"
                 "    lifecycle: { auto_start: true",
                 i);
        put(t, line);
        if (level > 0) {
            snprintf(line, sizeof line, ", depends_on: [ s%d, s%d ]",
                     (level - 1) * per_level + rand() % per_level,
                     (level - 1) * per_level + rand() % per_level);
            put(t, line);
        }
        put(t, " }\n");
    }
    char *yamls[MAX_FILES] = {0};
    for (size_t k = 0; k < n_files; k++) yamls[k] = files[k].s;
    probe p;
    double end = run_files(yamls, n_files, 1, n, &p);
    *up_ms = (p.t_done - p.t_start) * 1e3;
    *down_ms = (end - p.t_done) * 1e3;
    *up_cpu = (p.cpu_done - p.cpu_start) * 1e3;
    *down_cpu = (p.cpu_end - p.cpu_done) * 1e3;
    for (size_t k = 0; k < n_files; k++) free(files[k].s);
}

/* Cold start and shutdown at each size in sizes (0-terminated), each against the first: linear
 * when the per-service cost stays put (the target: 100k <= 10x 10k). */
static void cold_start(const int *sizes)
{
    double up0 = 0, down0 = 0, upc0 = 0, downc0 = 0;
    int n0 = 0;
    for (const int *n = sizes; *n; n++) {
        double up, down, upc, downc;
        cold_start_ms(*n, &up, &down, &upc, &downc);
        printf("cold start: %d services, 10 levels: all running in %.1f ms (%.1f us per "
               "service; target <= 100 ms at 10,000), shutdown %.1f ms (%.1f us per service)\n",
               *n, up, up * 1e3 / *n, down, down * 1e3 / *n);
        printf("  CPU on the supervisor's thread: start %.1f ms, shutdown %.1f ms\n", upc, downc);
        if (!n0) {
            n0 = *n;
            up0 = up;
            down0 = down;
            upc0 = upc;
            downc0 = downc;
            continue;
        }
        double k = (double)*n / n0;
        printf("  %.0fx the services of the first: start %.1fx, shutdown %.1fx its time; "
               "supervisor CPU %.1fx, %.1fx (linear: <= %.0fx)\n",
               k, up / up0, down / down0, upc / upc0, downc / downc0, k);
    }
}

/* Scenario 30: a group's restart window costs the same after a million past restarts as
 * after ten (OTP scans a list of them: 10k restarts slow it 8x). */
static double window_ns_per_restart(sw_window *w, int64_t *t, int64_t n)
{
    double t0 = bench_now();
    for (int64_t i = 0; i < n; i++, (*t) += 1000) sw_window_add(w, 100000, 50000000, *t);
    return (bench_now() - t0) * 1e9 / (double)n;
}

static void window_cost(void)
{
    sw_window w = {0};
    int64_t t = 0;
    double early = window_ns_per_restart(&w, &t, 1000);
    window_ns_per_restart(&w, &t, 1000000);
    double late = window_ns_per_restart(&w, &t, 1000);
    printf("restart window (intensity 100,000): %.1f ns per restart after 1,000 past, %.1f ns "
           "after 1,001,000 (ratio %.2f)\n",
           early, late, late / early);
    sw_window_free(&w);
}

int main(int argc, char **argv)
{
    /* argv: restarts (0 skips), restarts beside (0 skips), then the cold start sizes */
    long long n_restarts = argc > 1 ? atoll(argv[1]) : 100000;
    long long n_beside = argc > 2 ? atoll(argv[2]) : 10000;
    window_cost();
    if (n_restarts > 0) restarts(n_restarts);
    if (n_beside > 0) restarts_beside(n_beside);
    /* default 1,000, 10,000 and 100,000 services */
    int sizes[8] = {1000, 10000, 100000, 0};
    if (argc > 3) {
        int k = 0;
        for (int i = 3; i < argc && k < 7; i++) sizes[k++] = atoi(argv[i]);
        sizes[k] = 0;
    }
    cold_start(sizes);
    return 0;
}
