/* Status documents for the control socket (see control_status.h). */
#include "control_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pidtable.h"

int64_t sw_ctl_wall_ns(void)
{
    uv_timeval64_t tv;
    uv_gettimeofday(&tv);
    return tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000;
}

/* "2026-01-02T03:04:05.678Z" */
static void iso_time(char *out, size_t size, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&sec, &tm);
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns / 1000000 % 1000));
}

void sw_ctl_service_json(sw_jbuf *b, const sw_svc *v, int64_t now_wall_ns, uint64_t now_hr)
{
    char tmp[64];
    sw_jbuf_key(b, "id", true);
    sw_jbuf_str(b, v->entry->id);
    sw_jbuf_key(b, "state", false);
    sw_jbuf_str(b, sw_svc_state_name(sw_svc_state_of(v)));
    sw_jbuf_key(b, "pid", false);
    if (v->pid) {
        sw_pid_format(v->pid, tmp, sizeof tmp);
        sw_jbuf_str(b, tmp);
    } else sw_jbuf_lit(b, "null");
    sw_jbuf_key(b, "uptime", false);
    if (v->pid && v->run_start && now_hr >= v->run_start) sw_jbuf_num(b, (double)(now_hr - v->run_start) / 1e9);
    else sw_jbuf_lit(b, "null");
    sw_jbuf_key(b, "restarts", false);
    sw_jbuf_int(b, (int64_t)v->restarts);
    sw_jbuf_key(b, "attempt", false);
    sw_jbuf_int(b, v->attempt + 1);
    sw_jbuf_key(b, "next_retry", false);
    if (v->next_attempt_at) {
        iso_time(tmp, sizeof tmp, v->next_attempt_at);
        sw_jbuf_str(b, tmp);
        sw_jbuf_key(b, "next_retry_in", false);
        int64_t in = v->next_attempt_at - now_wall_ns;
        sw_jbuf_num(b, (double)(in > 0 ? in : 0) / 1e9);
    } else sw_jbuf_lit(b, "null,\"next_retry_in\":null");
    sw_jbuf_key(b, "reason", false);
    sw_jbuf_str(b, v->reason);
    sw_jbuf_key(b, "group", false);
    sw_jbuf_str(b, v->entry->parent ? v->entry->parent->id : NULL);
}

void sw_ctl_status_all(sw_jbuf *b, sw_supervisor *s, uint64_t host_start)
{
    int64_t wall = sw_ctl_wall_ns();
    uint64_t hr = uv_hrtime();
    sw_jbuf_lit(b, "{\"ok\":true,\"host\":{\"pid\":");
    sw_jbuf_int(b, (int64_t)getpid());
    sw_jbuf_key(b, "uptime", false);
    sw_jbuf_num(b, (double)(hr - host_start) / 1e9);
    sw_jbuf_key(b, "shutting_down", false);
    sw_jbuf_lit(b, s->shutting_down ? "true" : "false");
    sw_jbuf_key(b, "services", false);
    sw_jbuf_int(b, (int64_t)s->n);
    sw_jbuf_lit(b, "},\"services\":[");
    for (size_t i = 0; i < s->n; i++) {
        sw_jbuf_lit(b, i ? ",{" : "{");
        sw_ctl_service_json(b, s->svcs[i], wall, hr);
        sw_jbuf_lit(b, "}");
    }
    sw_jbuf_lit(b, "]}");
}

/* The ids of the services in idx[0..n), once each, as a JSON list. */
static void id_list(sw_jbuf *b, sw_supervisor *s, const size_t *idx, size_t n)
{
    sw_jbuf_lit(b, "[");
    bool first = true;
    for (size_t k = 0; k < n; k++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++) seen = idx[j] == idx[k];
        if (seen) continue;
        if (!first) sw_jbuf_lit(b, ",");
        first = false;
        sw_jbuf_str(b, s->svcs[idx[k]]->entry->id);
    }
    sw_jbuf_lit(b, "]");
}

static void dependencies(sw_jbuf *b, sw_supervisor *s, size_t i)
{
    const sw_graph *g = &s->reg->graph;
    size_t n = g->deps[i + 1] - g->deps[i];
    size_t *to = malloc((n ? n : 1) * sizeof *to);
    if (!to) {
        b->oom = true;
        return;
    }
    for (size_t k = 0; k < n; k++) to[k] = g->edges[g->deps[i] + k].to;
    id_list(b, s, to, n);
    free(to);
}

void sw_ctl_status_one(sw_jbuf *b, sw_supervisor *s, const sw_svc *v)
{
    sw_jbuf_lit(b, "{\"ok\":true,\"service\":{");
    sw_ctl_service_json(b, v, sw_ctl_wall_ns(), uv_hrtime());
    sw_jbuf_key(b, "depends_on", false);
    dependencies(b, s, v->index);
    sw_jbuf_key(b, "dependents", false);
    id_list(b, s, v->dependents, v->n_dependents);
    sw_jbuf_key(b, "errors", false);
    sw_jbuf_lit(b, "[");
    unsigned kept = v->n_errors < SW_SVC_ERRORS ? v->n_errors : SW_SVC_ERRORS;
    for (unsigned k = 0; k < kept; k++) {
        if (k) sw_jbuf_lit(b, ",");
        sw_jbuf_str(b, v->last_errors[(v->n_errors - 1 - k) % SW_SVC_ERRORS]);
    }
    sw_jbuf_lit(b, "]}}");
}
