/* Metrics endpoint benchmark: the time to render GET /metrics's body (metrics_text.h) for a
 * host of 1,000 running services (100 chains of 10, as bench_control), on the supervisor's
 * loop, where it runs. Baseline in the same run: the status document of every service as
 * `steward status --json` gets it (control_status.h, dumped to text), built from the same
 * figures. Target: 10 ms (the loop serves nothing else meanwhile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "bench_util.h"
#include "control_status.h"
#include "metrics_text.h"
#include "supervisor.h"

#define SERVICES 1000
#define CHAIN    10
#define RUNS     50

static char *app_yaml(void)
{
    size_t cap = 256 + SERVICES * 128, n = 0;
    char *y = malloc(cap);
    n += (size_t)snprintf(
        y + n, cap - n,
        "namespace: app\nentries:\n  - name: p\n    kind: process.lua\n    source: |\n"
        "      return function()\n        local ev = process.events()\n"
        "        repeat local e = ev:receive() until e.kind == process.event.CANCEL\n      end\n");
    for (int i = 0; i < SERVICES; i++) {
        n += (size_t)snprintf(y + n, cap - n,
                              "  - name: s%d\n    kind: process.service\n    process: p\n"
                              "    lifecycle: { auto_start: true",
                              i);
        if (i % CHAIN) n += (size_t)snprintf(y + n, cap - n, ", depends_on: [ s%d ]", i - 1);
        n += (size_t)snprintf(y + n, cap - n, " }\n");
    }
    return y;
}

typedef struct probe {
    sw_supervisor *sup;
    uv_timer_t timer;
    uint64_t start;
    double metrics[RUNS], status[RUNS];
    size_t metrics_len, status_len;
    bool measured;
} probe;

/* On the loop, once every service runs: both documents RUNS times each, interleaved. */
static void measure(probe *p)
{
    for (int i = 0; i < RUNS; i++) {
        double a = bench_now();
        char *text = sw_metrics_render(p->sup, p->start, &p->metrics_len);
        p->metrics[i] = bench_now() - a;
        free(text);
        a = bench_now();
        json_t *doc = sw_ctl_status_all(p->sup, p->start);
        text = sw_json_dump(doc, true, &p->status_len);
        json_decref(doc);
        p->status[i] = bench_now() - a;
        free(text);
    }
    p->measured = true;
}

static void on_probe(uv_timer_t *t)
{
    probe *p = t->data;
    sw_supervisor *s = p->sup;
    size_t running = 0;
    for (size_t i = 0; i < s->n; i++) running += sw_svc_state_of(s->svcs[i]) == SW_SVC_RUNNING;
    if (running != SERVICES) return;
    uv_timer_stop(t);
    measure(p);
    sw_supervisor_shutdown(s);
}

int main(void)
{
    char *yaml = app_yaml();
    sw_registry *reg = bench_load(yaml);
    FILE *sink = fopen("/dev/null", "w");
    sw_log *log = sw_log_new(sink, false, SW_LOG_INFO, false);
    sw_runtime_config cfg = {0};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, log, &cfg);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sw_supervisor sup;
    sw_supervisor_init(&sup, &loop, rt, reg, log);
    probe p = {.sup = &sup, .start = uv_hrtime()};
    uv_timer_init(&loop, &p.timer);
    p.timer.data = &p;
    uv_timer_start(&p.timer, on_probe, 0, 5);
    sw_supervisor_start(&sup);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&p.timer, NULL);
    sw_runtime_free(rt);
    sw_supervisor_close(&sup);
    uv_loop_close(&loop);
    sw_log_free(log);
    fclose(sink);
    sw_registry_free(reg);
    free(yaml);
    if (!p.measured) {
        fprintf(stderr, "bench_metrics: the host did not bring up %d services\n", SERVICES);
        return 1;
    }
    double m = bench_median(p.metrics, RUNS), s = bench_median(p.status, RUNS);
    printf("GET /metrics body, %d services: %zu bytes, render median %.2f ms (%.2f us/service)\n",
           SERVICES, p.metrics_len, m * 1e3, m * 1e6 / SERVICES);
    printf("baseline: status --json document, same services: %zu bytes, median %.2f ms\n",
           p.status_len, s * 1e3);
    printf("ratio metrics/status: %.2fx; target: render <= 10 ms -> %s\n", m / s,
           m <= 0.010 ? "met" : "MISSED");
    return 0;
}
