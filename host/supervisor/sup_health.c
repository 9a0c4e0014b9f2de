/* Health checks (docs/supervision.md "Health checks", Kubernetes' liveness and readiness
 * probes): a service with lifecycle.health has its check, a function.lua, run as a process of
 * its own with the service's identity and its config as the argument: at once when a run is
 * launched, then `interval` after each answer. The loop never waits: a check's end comes back
 * as a worker message (sup_on_health_exit, found by its pid) and one timer per service is either
 * the next check or the timeout of the one in flight. `failures` failed checks in a row fail the
 * run ("health check failed: ERROR"); failures within `start_period` of the launch do not
 * count, nor do any once a check has passed. With `ready: health` the first passing check makes
 * the service running. Every function runs on the supervisor's loop thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "proc.h"
#include "service.h"
#include "sup_internal.h"
#include "units.h"

static const sw_entry *check_of(const sw_svc *v)
{
    return v->entry->as.service.lifecycle.health.check.target;
}

static int64_t interval_of(const sw_svc *v)
{
    return v->entry->as.service.lifecycle.health.interval_ns;
}

/* Checks run while the run starts or runs (not while it is being stopped or failed). */
static bool checking(const sw_svc *v)
{
    return v->pid && (v->sub == SW_SUB_STARTING || v->sub == SW_SUB_RUNNING);
}

/* One "service health" event per change of health. */
static void enter_health(sw_svc *v, sw_health h)
{
    if (v->live.health == (int)h) return;
    v->live.health = h;
    v->sup->changed = true;
    bool ok = h == SW_HEALTH_HEALTHY;
    sw_log_field f[3] = {{.key = "health", .type = SW_LF_STR, .s = ok ? "healthy" : "unhealthy"},
                         {.key = "failures", .type = SW_LF_INT, .i = v->live.failures},
                         {.key = "error", .type = SW_LF_STR, .s = v->live.last_error}};
    sw_log_write(v->sup->log, ok ? SW_LOG_INFO : SW_LOG_WARN, v->entry->id, "service health", f,
                 ok ? 2 : 3);
}

static void check_due(uv_timer_t *t);

static void schedule_next(sw_svc *v) { sup_arm(&v->live.check_timer, check_due, interval_of(v)); }

static void passed(sw_svc *v)
{
    v->live.failures = 0;
    v->live.check_started = 0; /* a pass ends the start period */
    enter_health(v, SW_HEALTH_HEALTHY);
    if (v->sub == SW_SUB_STARTING && v->entry->as.service.lifecycle.ready == SW_READY_HEALTH)
        svc_ready(v, v->pid);
    schedule_next(v);
}

static void failed(sw_svc *v, const char *error)
{
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    char why[1024];
    snprintf(why, sizeof why, "%s", error && *error ? error : "failed");
    char *trace = strstr(why, "\nstack traceback:");
    if (trace) *trace = 0; /* the reason, not where it was raised */
    free(v->live.last_error);
    v->live.last_error = strdup(why);
    uint64_t now = uv_hrtime();
    bool counted = !v->live.check_started ||
                   (int64_t)(now - v->live.check_started) >= lc->health.start_period_ns;
    if (counted) v->live.failures++;
    sw_log_field f[4] = {{.key = "error", .type = SW_LF_STR, .s = why},
                         {.key = "failures", .type = SW_LF_INT, .i = v->live.failures},
                         {.key = "of", .type = SW_LF_INT, .i = lc->health.failures},
                         {.key = "counted", .type = SW_LF_BOOL, .b = counted}};
    sw_log_write(v->sup->log, SW_LOG_WARN, v->entry->id, "health check failed", f, 4);
    if (!counted) {
        schedule_next(v);
        return;
    }
    enter_health(v, SW_HEALTH_UNHEALTHY);
    if (v->live.failures < lc->health.failures) {
        schedule_next(v);
        return;
    }
    char reason[1100];
    snprintf(reason, sizeof reason, "health check failed: %s", why);
    svc_fail_run(v, reason);
}

/* Entry point: the check in flight is past its timeout; it is killed and counts as failed. */
static void check_timed_out(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!v->live.check_pid || !checking(v)) return;
    sw_runtime_kill(v->sup->rt, v->live.check_pid); /* its exit, when it comes, is about nobody */
    v->live.check_pid = 0;
    char d[32], why[64];
    sw_format_duration(v->entry->as.service.lifecycle.health.timeout_ns, d, sizeof d);
    snprintf(why, sizeof why, "timed out after %s", d);
    failed(v, why);
    sup_settle(v->sup);
}

/* Starts a check with the service's config as its argument; one that cannot start fails. */
static void launch_check(sw_svc *v)
{
    char err[512];
    sw_msgbuf args;
    const sw_node *config = v->entry->as.service.config;
    if (sw_msg_encode_node_values(&config, 1, &args, err, sizeof err) != 0) {
        sw_msgbuf_free(&args);
        failed(v, err);
        return;
    }
    sw_spawn sp = {.entry = check_of(v),
                   .registry = v->reg,
                   .service = v->entry->id,
                   .args = args.data,
                   .args_len = args.len,
                   .on_exit = sup_on_health_exit,
                   .cb_arg = v->sup};
    v->live.check_pid = sw_proc_spawn(v->sup->rt, &sp, err, sizeof err);
    sw_msgbuf_free(&args);
    if (!v->live.check_pid) {
        failed(v, err);
        return;
    }
    sup_arm(&v->live.check_timer, check_timed_out,
            v->entry->as.service.lifecycle.health.timeout_ns);
}

/* Entry point: the next check is due. */
static void check_due(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!checking(v) || v->live.check_pid) return;
    launch_check(v);
    if (v->sup->changed) sup_settle(v->sup);
}

void svc_health_begin(sw_svc *v)
{
    if (!check_of(v)) return;
    v->live.failures = 0;
    v->live.health = SW_HEALTH_UNKNOWN;
    v->live.check_started = uv_hrtime();
    free(v->live.last_error);
    v->live.last_error = NULL;
    sup_arm(&v->live.check_timer, check_due, 0); /* the first check: once the launch is settled */
}

/* A check ended: found among the services (and those a reload removed) by its pid. */
void sup_health_ended(sw_supervisor *s, uint64_t pid, sw_exit_kind kind, const char *error)
{
    sw_svc *v = NULL;
    for (size_t i = 0; i < s->n && !v; i++)
        if (s->svcs[i]->live.check_pid == pid) v = s->svcs[i];
    for (size_t i = 0; i < s->n_retired && !v; i++)
        if (s->retired[i]->live.check_pid == pid) v = s->retired[i];
    if (!v || !checking(v)) return; /* timed out already, or its run is over */
    v->live.check_pid = 0;
    uv_timer_stop(&v->live.check_timer);
    if (kind == SW_EXIT_OK) passed(v);
    else failed(v, error);
}

void svc_liveness_stop(sw_svc *v)
{
    uv_timer_stop(&v->live.watchdog);
    uv_timer_stop(&v->live.check_timer);
    v->live.since = 0;
    if (v->live.check_pid) sw_runtime_kill(v->sup->rt, v->live.check_pid);
    v->live.check_pid = 0;
    if (v->live.health != SW_HEALTH_NONE) v->sup->changed = true;
    v->live.health = SW_HEALTH_NONE;
}
