/* The Prometheus text of the host's figures (see metrics_text.h): each service's figures read
 * once into a table, then written family by family (each family's HELP and TYPE once, then its
 * samples), into a memory stream. */
#include "metrics_text.h"

#include <stdio.h>
#include <stdlib.h>

#include "control_status.h"
#include "log.h"
#include "runtime.h"

/* The per-service figures, in the order of the families below. */
enum {
    F_RESTARTS,
    F_UPTIME,
    F_PROCESSES,
    F_MEMORY,
    F_MEMORY_PEAK,
    F_MEMORY_MAX,
    F_QUEUED,
    F_CPU,
    N_FIGURES
};

typedef struct family {
    const char *name, *type, *help;
    bool skip_zero; /* a 0 means "none" (no limit): no sample */
} family;

static const family service_families[N_FIGURES] = {
    [F_RESTARTS] = {"steward_service_restarts_total", "counter",
                    "Runs of the service started after its first one."},
    [F_UPTIME] = {"steward_service_uptime_seconds", "gauge",
                  "Seconds the current run has been up (0 when none runs)."},
    [F_PROCESSES] = {"steward_service_processes", "gauge",
                     "Live processes of the service: its own and those it spawned."},
    [F_MEMORY] = {"steward_service_memory_bytes", "gauge",
                  "Lua heap bytes of the service's processes (in budget steps)."},
    [F_MEMORY_PEAK] = {"steward_service_memory_peak_bytes", "gauge",
                       "The most memory the service's processes held in this run."},
    [F_MEMORY_MAX] = {"steward_service_memory_max_bytes", "gauge",
                      "The service's memory limit (lifecycle.limits.memory), when it has one.",
                      true},
    [F_QUEUED] = {"steward_service_queued_messages", "gauge",
                  "Messages waiting in the mailboxes of the service's processes."},
    [F_CPU] = {"steward_service_cpu_seconds_total", "counter",
               "CPU seconds the service's processes ran in this run (resets with a new run)."},
};

typedef struct svc_figures {
    const char *id;
    sw_svc_state state;
    double v[N_FIGURES];
} svc_figures;

static void read_figures(const sw_svc *v, uint64_t now_hr, svc_figures *f)
{
    sw_svc_usage u = sw_svc_usage_of(v->tree);
    double up = sw_ctl_service_uptime(v, now_hr);
    f->id = v->entry->id;
    f->state = sw_svc_state_of(v);
    f->v[F_RESTARTS] = (double)v->restarts;
    f->v[F_UPTIME] = up > 0 ? up : 0;
    f->v[F_PROCESSES] = (double)sw_ctl_service_processes(v);
    f->v[F_MEMORY] = (double)u.memory;
    f->v[F_MEMORY_PEAK] = (double)u.memory_peak;
    f->v[F_MEMORY_MAX] = (double)u.memory_max;
    f->v[F_QUEUED] = (double)u.queued;
    f->v[F_CPU] = u.cpu_s;
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the format escapes it: backslash, double quote and newline. */
static void label_value(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\') fputs("\\\\", out);
        else if (*s == '"') fputs("\\\"", out);
        else if (*s == '\n') fputs("\\n", out);
        else putc(*s, out);
    }
}

static void service_sample(FILE *out, const char *name, const char *id, double value)
{
    fprintf(out, "%s{service=\"", name);
    label_value(out, id);
    fprintf(out, "\"} %.15g\n", value);
}

static void write_states(FILE *out, const svc_figures *f, size_t n)
{
    head(out, "steward_service_state", "gauge",
         "1 for the service's current state (docs/supervision.md \"States\"), 0 for the others.");
    for (size_t i = 0; i < n; i++)
        for (int st = SW_SVC_INACTIVE; st <= SW_SVC_FAILED; st++) {
            fputs("steward_service_state{service=\"", out);
            label_value(out, f[i].id);
            fprintf(out, "\",state=\"%s\"} %d\n", sw_svc_state_name((sw_svc_state)st),
                    f[i].state == (sw_svc_state)st);
        }
}

static void write_services(FILE *out, const svc_figures *f, size_t n)
{
    write_states(out, f, n);
    for (int k = 0; k < N_FIGURES; k++) {
        const family *fam = &service_families[k];
        head(out, fam->name, fam->type, fam->help);
        for (size_t i = 0; i < n; i++)
            if (!fam->skip_zero || f[i].v[k] != 0)
                service_sample(out, fam->name, f[i].id, f[i].v[k]);
    }
}

static void host_gauge(FILE *out, const char *name, const char *type, const char *help,
                       double value)
{
    head(out, name, type, help);
    fprintf(out, "%s %.15g\n", name, value);
}

static void write_host(FILE *out, sw_supervisor *s, const svc_figures *f, uint64_t up_ns)
{
    sw_runtime *rt = s->rt;
    size_t by_state[SW_SVC_FAILED + 1] = {0};
    for (size_t i = 0; i < s->n; i++) by_state[f[i].state]++;
    head(out, "steward_host_services", "gauge", "Services of the host in each state.");
    for (int st = SW_SVC_INACTIVE; st <= SW_SVC_FAILED; st++)
        fprintf(out, "steward_host_services{state=\"%s\"} %zu\n",
                sw_svc_state_name((sw_svc_state)st), by_state[st]);
    host_gauge(out, "steward_host_uptime_seconds", "gauge", "Seconds since the host started.",
               (double)up_ns / 1e9);
    host_gauge(out, "steward_host_processes", "gauge",
               "Live processes in the host, prepared ones included.",
               (double)atomic_load_explicit(&rt->procs, memory_order_relaxed));
    host_gauge(out, "steward_host_processes_limit", "gauge",
               "The most live processes the host allows (limits.processes).",
               (double)rt->limits.processes);
    host_gauge(out, "steward_host_memory_bytes", "gauge",
               "Bytes of Lua heaps and queued messages of every process.",
               (double)atomic_load_explicit(&rt->memory.used, memory_order_relaxed));
    host_gauge(out, "steward_host_memory_limit_bytes", "gauge",
               "The host's memory cap (limits.memory).",
               (double)atomic_load_explicit(&rt->memory.cap, memory_order_relaxed));
    host_gauge(out, "steward_host_shutting_down", "gauge", "1 while the host shuts down.",
               s->shutting_down ? 1 : 0);
    host_gauge(out, "steward_log_lines_dropped_total", "counter",
               "Log lines lost because the log's buffer was full or a write failed.",
               (double)sw_log_dropped(s->log));
}

char *sw_metrics_render(sw_supervisor *s, uint64_t host_start, size_t *len)
{
    uint64_t now = uv_hrtime();
    svc_figures *f = malloc((s->n ? s->n : 1) * sizeof *f);
    char *text = NULL;
    FILE *out = f ? open_memstream(&text, len) : NULL;
    if (!out) {
        free(f);
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++) read_figures(s->svcs[i], now, &f[i]);
    write_services(out, f, s->n);
    write_host(out, s, f, now - host_start);
    bool failed = ferror(out) != 0;
    fclose(out); /* sets text and *len */
    free(f);
    if (failed) {
        free(text);
        return NULL;
    }
    return text;
}
