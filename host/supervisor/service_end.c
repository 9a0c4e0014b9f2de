/* The end of one service's run (service.h): its tree's end (CANCEL, then killed after
 * stop_timeout), the end's reason, and its judgement as a stop or by its restart policy, with
 * the restart it schedules (backoff). The transitions are service.c's (service_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "runtime.h"
#include "service_internal.h"

/* ---- ends and restarts ---- */

static sw_svc_sub down(sw_svc_state st)
{
    return st == SW_SVC_STOPPED ? SW_SUB_STOPPED : SW_SUB_FAILED;
}

static void record_error(sw_svc *v, const char *reason)
{
    char **slot = &v->last_errors[v->n_errors++ % SW_SVC_ERRORS];
    free(*slot);
    *slot = strdup(reason);
}

static int64_t wall_ns(void)
{
    uv_timeval64_t tv;
    uv_gettimeofday(&tv);
    return tv.tv_sec * SW_NS_PER_S + (int64_t)tv.tv_usec * 1000;
}

void svc_schedule_restart(sw_svc *v, sw_svc_state st, const char *reason, int64_t delay)
{
    v->next_attempt_at = wall_ns() + delay;
    sw_svc_sub waiting = st == SW_SVC_STOPPED ? SW_SUB_BACKOFF_STOPPED : SW_SUB_BACKOFF_FAILED;
    svc_enter(v, delay ? waiting : down(st), reason,
              delay); /* logged with the attempt that just ended */
    v->attempt++;
    if (delay) /* else the reconcile after this end starts it */
        sup_arm(&v->timer, svc_backoff_fired, delay);
}

void svc_set_restart(sw_svc *v, sw_svc_state st, const char *reason, int64_t delay)
{
    v->attempt++;
    v->next_attempt_at = wall_ns() + delay;
    svc_enter(v, down(st), reason, delay);
}

void svc_end_held(sw_svc *v, sw_svc_state st, const char *reason)
{
    svc_enter(v, down(st), reason, -1);
}

/* The end's text. A failure of its process (raised, returned, a limit; not a kill) is also
 * logged as its own "process failed" event, with the traceback when there is one: the state
 * event keeps only the message. */
static void end_reason(sw_svc *v, sw_exit_kind kind, const char *error, char *reason, size_t size)
{
    const char *why = failed_by_host(v->sub) ? v->reason
                      : kind == SW_EXIT_OK   ? "returned"
                      : error                ? error
                                             : "failed";
    snprintf(reason, size, "%s", why ? why : "failed");
    char *trace = strstr(reason, "\nstack traceback:");
    if (trace) *trace = 0;
    if (kind != SW_EXIT_FAILED || failed_by_host(v->sub)) return;
    sw_log_field f[2] = {{.key = "error", .type = SW_LF_STR, .s = reason},
                         {.key = "traceback",
                          .type = SW_LF_STR,
                          .s = trace ? strstr(error, "stack traceback:") : NULL}};
    sw_log_write(v->sup->log, SW_LOG_ERROR, v->entry->id, "process failed", f, trace ? 2 : 1);
}

const sw_restart *svc_restart(const sw_svc *v)
{
    return v->run_policy.set ? &v->run_policy.r : &v->entry->as.service.lifecycle.restart;
}

void svc_request(sw_svc *v, const sw_svc_request *rq)
{
    if (!v->pid && v->sub != SW_SUB_ENDING && v->sub != SW_SUB_ENDING_KILLED) return;
    switch (rq->kind) {
    case SW_SVC_REQ_READY: /* ready: health waits for its check, not for the process */
        if (v->entry->as.service.lifecycle.ready == SW_READY_NOTIFY) svc_ready(v, v->pid);
        break;
    case SW_SVC_REQ_SET_POLICY:
        v->run_policy.r = rq->policy;
        v->run_policy.set = true;
        break;
    case SW_SVC_REQ_CLEAR_POLICY: v->run_policy.set = false; break;
    case SW_SVC_REQ_RESET_BACKOFF: v->attempt = 0; break; /* Akka's manual reset */
    }
}

/* Whether the service's own policy restarts it after this end. */
static bool restart_worthy(const sw_svc *v, bool ok, bool retryable)
{
    int policy = svc_restart(v)->policy;
    bool restart = policy == SW_RESTART_ALWAYS || (policy == SW_RESTART_ON_FAILURE && !ok);
    if (!ok && !retryable) restart = false;
    /* ended by itself during shutdown or a stop by hand (before its CANCEL came): it keeps
     * its own reason, and it is not restarted */
    return restart && !v->sup->shutting_down && !sw_svc_for_good(v);
}

/* `steward run --watch`: a failure waits for the next change rather than a restart, so an edit
 * that breaks a service does not crash-loop it (docs/supervision.md "Watch mode"). */
static void hold_for_change(sw_svc *v, const char *reason)
{
    v->held_for_change = true;
    svc_enter(v, SW_SUB_FAILED_FOR_GOOD, reason, -1);
    sw_log_write(v->sup->log, SW_LOG_WARN, v->entry->id, "waiting for a change", NULL, 0);
}

static void policy_end(sw_svc *v, bool ok, bool retryable, const char *reason, svc_end *out)
{
    const sw_restart *r = svc_restart(v);
    sw_svc_state st = ok ? SW_SVC_STOPPED : SW_SVC_FAILED;
    if (!restart_worthy(v, ok, retryable)) {
        svc_enter(v, svc_for_good_of(down(st)), reason, -1);
    } else if (!ok && v->sup->hold_failures) {
        hold_for_change(v, reason);
    } else if (r->max_attempts > 0 && v->attempt + 1 >= r->max_attempts) {
        char gave_up[1100];
        snprintf(gave_up, sizeof gave_up, "gave up after %lld attempts: %s",
                 (long long)r->max_attempts, reason);
        svc_enter(v, svc_for_good_of(down(st)), gave_up, -1);
    } else if (v->held_by) {
        svc_end_held(v, st, reason); /* already part of a restart under way */
    } else if (v->group) {
        out->to_group = true;
        out->st = st;
        snprintf(out->reason, sizeof out->reason, "%s", reason);
    } else {
        svc_schedule_restart(v, st, reason, sw_backoff_next(r, v->attempt));
    }
}

/* The run is over, its tree included: judged as stop, or by its own policy. */
static void run_over(sw_svc *v, sw_exit_kind kind, bool retryable, const char *error, svc_end *out)
{
    svc_log_usage(v);
    if (svc_over_memory(v)) { /* whichever process hit it, the run fails with it */
        kind = SW_EXIT_FAILED;
        retryable = true;
        error = v->tree->memory.refusal;
    }
    if (stop_requested(
            v->sub)) { /* an explicit stop or shutdown: terminal, whatever the end looked like */
        const char *why = !killed(v->sub)            ? (v->held_by ? "restarting" : "stopped")
                          : v->sup->shutdown_expired ? "killed after shutdown.timeout"
                          : stop_timeout(v) == 0     ? "killed at once (stop_timeout: 0)"
                                                     : "killed after stop_timeout";
        svc_enter(v, SW_SUB_STOPPED, why, -1);
        return;
    }
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    if ((int64_t)(uv_hrtime() - v->run_start) >= lc->stable_threshold_ns)
        v->attempt = 0; /* a stable run */
    bool ok = kind == SW_EXIT_OK;
    char reason[1024];
    end_reason(v, kind, error, reason, sizeof reason);
    if (!ok) record_error(v, reason);
    policy_end(v, ok, retryable, reason, out);
    if (sw_svc_for_good(v)) svc_drop_standby(v);
}

/* The run's own process ended with processes it spawned left: they get CANCEL (once the
 * stopping event is logged, so what they log on CANCEL comes after it), and are
 * killed after stop_timeout; the end is judged once they are gone (svc_tree_gone). false
 * when the tree is already gone (the common case: it costs nothing). */
static bool await_tree(sw_svc *v, sw_exit_kind kind, bool retryable, const char *error)
{
    if (!v->tree || sw_tree_end(v->tree, sup_on_tree_gone, v)) return false;
    v->end.sub = v->sub;
    v->end.kind = (int)kind;
    v->end.retryable = retryable;
    v->end.error = error ? strdup(error) : NULL;
    if (sw_svc_view(v->sub) == SW_SVC_STOPPING)
        shift(v, SW_SUB_ENDING); /* a stop: its reason stays */
    else
        svc_enter(v, SW_SUB_ENDING,
                  failed_by_host(v->sub) ? v->reason : "stopping the processes it spawned", -1);
    if (kill_at_once(v)) {
        shift(v, SW_SUB_ENDING_KILLED);
        sw_runtime_kill_tree(v->sup->rt, v->tree);
        return true;
    }
    sw_runtime_cancel_tree(v->sup->rt, v->tree); /* after the event: its CANCELs come after it */
    arm_stop_timeout(v, svc_tree_timeout_fired);
    return true;
}

bool svc_ended(sw_svc *v, uint64_t pid, sw_exit_kind kind, bool retryable, const char *error,
               svc_end *out)
{
    out->to_group = false;
    if (pid != v->pid) return false; /* about an earlier run */
    svc_timer_stop(v);
    svc_liveness_stop(v);
    v->pid = 0;
    if (!await_tree(v, kind, retryable, error)) run_over(v, kind, retryable, error, out);
    return true;
}

bool svc_tree_gone(sw_svc *v, svc_end *out)
{
    out->to_group = false;
    if (v->sub != SW_SUB_ENDING && v->sub != SW_SUB_ENDING_KILLED) return false;
    if (!sw_tree_gone(v->tree)) return false; /* a stale call: the next one is on its way */
    svc_timer_stop(v);
    char *error = v->end.error;
    v->end.error = NULL;
    v->sub = v->end.sub; /* judged as it ended; the kill of those left changes nothing */
    run_over(v, (sw_exit_kind)v->end.kind, v->end.retryable, error, out);
    free(error);
    return true;
}
