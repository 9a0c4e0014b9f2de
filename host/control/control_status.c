/* Status documents for the control socket (see control_status.h), built as Jansson values. */
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
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns / 1000000 % 1000));
}

double sw_ctl_service_uptime(const sw_svc *v, uint64_t now_hr)
{
    bool up = v->pid && v->run_start && now_hr >= v->run_start;
    return up ? (double)(now_hr - v->run_start) / 1e9 : -1;
}

long long sw_ctl_service_processes(const sw_svc *v)
{
    /* its own process and those it spawned, at any depth (an ending run's tree included) */
    long long tree = v->tree ? atomic_load_explicit(&v->tree->live, memory_order_relaxed) : 0;
    return (v->pid ? 1 : 0) + (tree > 0 ? tree : 0);
}

/* Liveness (docs/supervision.md "Watchdog", "Health checks"): the health its checks found in
 * this run ({state, failures, of, error}; null without checks or a run), the watchdog's
 * interval and the seconds since the last service.alive() (null without a watchdog). */
static int liveness_json(json_t *o, const sw_svc *v, uint64_t now_hr)
{
    static const char *const names[] = {NULL, "unknown", "healthy", "unhealthy"};
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    json_t *health = json_null();
    if (v->live.health != SW_HEALTH_NONE) {
        health = json_object();
        int rc = sw_json_set(health, "state", sw_json_str(names[v->live.health]));
        rc |= sw_json_set(health, "failures", json_integer((json_int_t)v->live.failures));
        rc |= sw_json_set(health, "of", json_integer((json_int_t)lc->health.failures));
        rc |= sw_json_set(health, "error", sw_json_str(v->live.last_error));
        if (rc != 0) json_decref(health), health = NULL;
    }
    double age = sw_svc_alive_age(v, now_hr);
    int rc = sw_json_set(o, "health", health);
    rc |= sw_json_set(o, "watchdog",
                      lc->watchdog_ns ? sw_json_num((double)lc->watchdog_ns / 1e9) : json_null());
    rc |= sw_json_set(o, "last_alive", age >= 0 ? sw_json_num(age) : json_null());
    return rc;
}

json_t *sw_ctl_service_json(const sw_svc *v, int64_t now_wall_ns, uint64_t now_hr)
{
    char pid[64], at[64];
    if (v->pid) sw_pid_format(v->pid, pid, sizeof pid);
    if (v->next_attempt_at) iso_time(at, sizeof at, v->next_attempt_at);
    int64_t in = v->next_attempt_at - now_wall_ns;
    double up = sw_ctl_service_uptime(v, now_hr);
    /* one set per key rather than json_pack: this runs for every service of a status */
    json_t *o = json_object();
    int rc = sw_json_set(o, "id", sw_json_str(v->entry->id));
    rc |= sw_json_set(o, "state", sw_json_str(sw_svc_state_name(sw_svc_state_of(v))));
    rc |= sw_json_set(o, "pid", sw_json_str(v->pid ? pid : NULL));
    rc |= sw_json_set(o, "uptime", up >= 0 ? sw_json_num(up) : json_null());
    rc |= sw_json_set(o, "processes", json_integer((json_int_t)sw_ctl_service_processes(v)));
    /* what they use (docs/supervision.md "Resources"): memory in budget steps, this run's CPU */
    sw_svc_usage u = sw_svc_usage_of(v->tree);
    rc |= sw_json_set(o, "memory", json_integer((json_int_t)u.memory));
    rc |= sw_json_set(o, "memory_peak", json_integer((json_int_t)u.memory_peak));
    rc |= sw_json_set(o, "memory_max",
                      u.memory_max ? json_integer((json_int_t)u.memory_max) : json_null());
    rc |= sw_json_set(o, "cpu", sw_json_num(u.cpu_s));
    rc |= sw_json_set(o, "queued", json_integer((json_int_t)u.queued));
    rc |= sw_json_set(o, "restarts", json_integer((json_int_t)v->restarts));
    rc |= sw_json_set(o, "attempt", json_integer((json_int_t)v->attempt + 1));
    rc |= sw_json_set(o, "next_retry", sw_json_str(v->next_attempt_at ? at : NULL));
    rc |= sw_json_set(o, "next_retry_in",
                      v->next_attempt_at ? sw_json_num((double)(in > 0 ? in : 0) / 1e9)
                                         : json_null());
    rc |= sw_json_set(o, "reason", sw_json_str(v->reason));
    rc |= sw_json_set(o, "group", sw_json_str(v->entry->parent ? v->entry->parent->id : NULL));
    rc |= liveness_json(o, v, now_hr);
    if (rc == 0) return o;
    json_decref(o);
    return NULL;
}

json_t *sw_ctl_status_all(sw_supervisor *s, uint64_t host_start)
{
    int64_t wall = sw_ctl_wall_ns();
    uint64_t hr = uv_hrtime();
    json_t *list = json_array();
    for (size_t i = 0; i < s->n && list; i++) {
        if (json_array_append_new(list, sw_ctl_service_json(s->svcs[i], wall, hr)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return json_pack("{s:b, s:{s:I, s:o, s:b, s:I}, s:o}", "ok", 1, "host", "pid",
                     (json_int_t)getpid(), "uptime", sw_json_num((double)(hr - host_start) / 1e9),
                     "shutting_down", (int)s->shutting_down, "services", (json_int_t)s->n,
                     "services", list);
}

/* The ids of the services in idx[0..n), once each, as a JSON list. */
static json_t *id_list(sw_supervisor *s, const size_t *idx, size_t n)
{
    json_t *list = json_array();
    for (size_t k = 0; k < n && list; k++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++) seen = idx[j] == idx[k];
        if (!seen && json_array_append_new(list, sw_json_str(s->svcs[idx[k]]->entry->id)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

static json_t *dependencies(sw_supervisor *s, size_t i)
{
    const sw_graph *g = &s->reg->graph;
    size_t n = g->deps[i + 1] - g->deps[i];
    size_t *to = malloc((n ? n : 1) * sizeof *to);
    if (!to) return NULL;
    for (size_t k = 0; k < n; k++) to[k] = g->edges[g->deps[i] + k].to;
    json_t *list = id_list(s, to, n);
    free(to);
    return list;
}

/* The service's last errors, newest first. */
static json_t *errors(const sw_svc *v)
{
    json_t *list = json_array();
    unsigned kept = v->n_errors < SW_SVC_ERRORS ? v->n_errors : SW_SVC_ERRORS;
    for (unsigned k = 0; k < kept && list; k++) {
        if (json_array_append_new(
                list, sw_json_str(v->last_errors[(v->n_errors - 1 - k) % SW_SVC_ERRORS])) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

json_t *sw_ctl_status_one(sw_supervisor *s, const sw_svc *v)
{
    json_t *svc = sw_ctl_service_json(v, sw_ctl_wall_ns(), uv_hrtime());
    int rc = sw_json_set(svc, "depends_on", dependencies(s, v->index));
    rc |= sw_json_set(svc, "dependents", id_list(s, v->dependents, v->n_dependents));
    rc |= sw_json_set(svc, "errors", errors(v));
    if (rc != 0) {
        json_decref(svc);
        return NULL;
    }
    return json_pack("{s:b, s:o}", "ok", 1, "service", svc);
}
