/* One service's lifecycle (see service.h): what each sub-state means and shows, the one
 * logged transition (svc_enter) and the silent shifts within a public state, its timers,
 * stops and kills. Launching a run and the standby made ahead for a crash loop are
 * service_launch.c's; the end of a run and its restart, service_end.c's; what they share,
 * service_internal.h's. Builds on the runtime (proc.h) and hands worker callbacks to the
 * supervisor's queue (sup_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "runtime.h"
#include "service_internal.h"

/* ---- sub-states (what each shows: service_view.c) ---- */

static bool for_good_sub(sw_svc_sub sub)
{
    return sub == SW_SUB_INACTIVE_FOR_GOOD || sub == SW_SUB_STOPPED_FOR_GOOD ||
           sub == SW_SUB_FAILED_FOR_GOOD;
}

bool sw_svc_waiting(const sw_svc *v)
{
    return v->sub == SW_SUB_BACKOFF_STOPPED || v->sub == SW_SUB_BACKOFF_FAILED;
}
bool sw_svc_for_good(const sw_svc *v) { return for_good_sub(v->sub) || v->ends_for_good; }

bool sw_svc_active(const sw_svc *v)
{
    return v->pid != 0 || sw_svc_view(v->sub) == SW_SVC_STOPPING || v->sub == SW_SUB_AWAIT_STANDBY;
}

bool sw_svc_settled(const sw_svc *v)
{
    sw_svc_state st = sw_svc_view(v->sub);
    if (v->held_by) return false;
    if (st == SW_SVC_RUNNING || st == SW_SVC_FAILED) return true;
    if (st == SW_SVC_STARTING || st == SW_SVC_STOPPING) return false;
    if (sw_svc_waiting(v) || sw_svc_for_good(v) || !v->wanted) return true;
    return st == SW_SVC_INACTIVE && v->reason; /* blocked by a dependency */
}

bool svc_idle(const sw_svc *v)
{
    sw_svc_state st = sw_svc_view(v->sub);
    return !sw_svc_for_good(v) && !sw_svc_waiting(v) && !v->pid && v->sub != SW_SUB_AWAIT_STANDBY &&
           (st == SW_SVC_INACTIVE || st == SW_SVC_STOPPED || st == SW_SVC_FAILED);
}

bool svc_blocked_for_good(const sw_svc *d)
{
    sw_svc_state st = sw_svc_view(d->sub);
    if (sw_svc_waiting(d) || d->pid || d->sub == SW_SUB_AWAIT_STANDBY) return false;
    if (sw_svc_for_good(d) &&
        (st == SW_SVC_FAILED || st == SW_SVC_STOPPED || st == SW_SVC_INACTIVE))
        return true;
    return st == SW_SVC_INACTIVE && d->reason;
}

bool svc_started(const sw_svc *m)
{
    sw_svc_state st = sw_svc_view(m->sub);
    return st == SW_SVC_RUNNING || (sw_svc_for_good(m) && m->run_start && st == SW_SVC_STOPPED);
}

/* ---- transitions ---- */

void sup_log_state(sw_supervisor *s, const char *id, sw_svc_state st, int64_t attempt,
                   const char *reason, int64_t next_ns)
{
    sw_log_field f[4];
    size_t n = 0;
    f[n++] = (sw_log_field){.key = "state", .type = SW_LF_STR, .s = sw_svc_state_name(st)};
    f[n++] = (sw_log_field){.key = "attempt", .type = SW_LF_INT, .i = attempt};
    if (reason) f[n++] = (sw_log_field){.key = "reason", .type = SW_LF_STR, .s = reason};
    if (next_ns >= 0)
        f[n++] =
            (sw_log_field){.key = "next_attempt", .type = SW_LF_NUM, .d = (double)next_ns / 1e9};
    sw_log_level level = st == SW_SVC_FAILED ? SW_LOG_WARN : SW_LOG_INFO;
    sw_log_write(s->log, level, id, "service state", f, n);
    s->changed = true;
}

/* A down sub-state as it is for a service whose run ended for good. */
sw_svc_sub svc_for_good_of(sw_svc_sub sub)
{
    switch (sub) {
    case SW_SUB_INACTIVE:
    case SW_SUB_BLOCKED: return SW_SUB_INACTIVE_FOR_GOOD;
    case SW_SUB_STOPPED: return SW_SUB_STOPPED_FOR_GOOD;
    case SW_SUB_FAILED: return SW_SUB_FAILED_FOR_GOOD;
    default: return sub;
    }
}

/* No run under way or pending: neither starting, running, stopping nor in backoff. */
static bool at_rest(sw_svc_sub sub)
{
    return svc_for_good_of(sub) != sub || for_good_sub(sub) || sub == SW_SUB_DISCARDED;
}

/* The one logged transition: v enters sub with reason (copied; NULL for none), logged as one
 * "service state" event with next_ns (-1: no restart scheduled). A down sub-state is the
 * _FOR_GOOD one if the run that ended was decided to be the last. */
void svc_enter(sw_svc *v, sw_svc_sub sub, const char *reason, int64_t next_ns)
{
    if (v->ends_for_good && at_rest(sub)) { /* the run it was decided for is over */
        sub = svc_for_good_of(sub);
        v->ends_for_good = false;
    }
    v->sub = sub;
    if (reason != v->reason) {
        free(v->reason);
        v->reason = reason ? strdup(reason) : NULL;
    }
    sup_log_state(v->sup, v->entry->id, sw_svc_view(sub), v->attempt + 1, reason, next_ns);
    sup_shutdown_touched(v);
    sup_touch(v);
}

void svc_block(sw_svc *v, const char *reason) { svc_enter(v, SW_SUB_BLOCKED, reason, -1); }

void svc_mark_for_good(sw_svc *v)
{
    if (at_rest(v->sub)) shift(v, svc_for_good_of(v->sub));
    else v->ends_for_good = true;
    v->sup->changed = true;
    sup_touch(v);
}

void svc_fresh(sw_svc *v)
{
    if (v->sub == SW_SUB_INACTIVE_FOR_GOOD) shift(v, v->reason ? SW_SUB_BLOCKED : SW_SUB_INACTIVE);
    else if (v->sub == SW_SUB_STOPPED_FOR_GOOD) shift(v, SW_SUB_STOPPED);
    else if (v->sub == SW_SUB_FAILED_FOR_GOOD) shift(v, SW_SUB_FAILED);
    v->ends_for_good = false;
    v->attempt = 0;
    v->sup->changed = true;
    sup_touch(v);
}

/* ---- timers (each an entry point: it ends with the supervisor's settle) ---- */

void svc_start_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!v->pid || (v->sub != SW_SUB_STARTING && v->sub != SW_SUB_STARTING_KILLED)) return;
    free(v->reason);
    v->reason = strdup("not ready within start_timeout");
    if (v->sub == SW_SUB_STARTING) shift(v, SW_SUB_START_TIMED_OUT);
    sw_runtime_kill(v->sup->rt, v->pid);
    sup_settle(v->sup);
}

/* stop_wave.c settles after a batch of these. */
static void stop_timeout_fired(sw_svc *v)
{
    if (!v->pid || sw_svc_view(v->sub) != SW_SVC_STOPPING) return;
    shift(v, SW_SUB_STOPPING_KILLED);
    sw_runtime_kill(v->sup->rt, v->pid);
}

void svc_tree_timeout_fired(sw_svc *v)
{
    if (v->sub != SW_SUB_ENDING) return;
    shift(v, SW_SUB_ENDING_KILLED);
    sw_runtime_kill_tree(v->sup->rt, v->tree);
}

void svc_backoff_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    v->sup->local = true; /* one service's own restart: its reconcile looks at it alone */
    shift(v, v->sub == SW_SUB_BACKOFF_STOPPED ? SW_SUB_STOPPED : SW_SUB_FAILED);
    sup_settle(v->sup);
    v->sup->local = false;
}

/* ---- stopping ---- */

void svc_begin_stop(sw_svc *v)
{
    sw_supervisor *s = v->sup;
    svc_drop_standby(v);
    if (v->sub == SW_SUB_AWAIT_STANDBY) { /* its process is not made yet: it never runs */
        svc_enter(v, SW_SUB_STOPPED, "stopped before it started", -1);
        return;
    }
    if (sw_svc_waiting(v)) { /* waiting to restart: nothing runs, just cancel the restart */
        svc_timer_stop(v);
        svc_enter(v, SW_SUB_STOPPED, "stopped while waiting to restart", -1);
        return;
    }
    if (!v->pid || sw_svc_view(v->sub) == SW_SVC_STOPPING) return;
    svc_timer_stop(v);
    svc_liveness_stop(v);
    bool brutal = kill_at_once(v);
    svc_enter(v, killed(v->sub) || brutal ? SW_SUB_STOPPING_KILLED : SW_SUB_STOPPING,
              s->shutting_down ? "shutdown" : "stop requested", -1);
    if (brutal) {
        sw_runtime_kill(s->rt, v->pid);
        return;
    }
    sw_delivery *d = sw_delivery_new(SW_DLV_CANCEL, 0, 0, NULL, NULL, 0);
    if (d) sw_runtime_deliver(s->rt, v->pid, d);
    arm_stop_timeout(v, stop_timeout_fired);
}

void svc_kill(sw_svc *v)
{
    if (v->sub == SW_SUB_ENDING) {
        svc_timer_stop(v);
        shift(v, SW_SUB_ENDING_KILLED);
        sw_runtime_kill_tree(v->sup->rt, v->tree);
    }
    if (!v->pid) return;
    sw_svc_state st = sw_svc_view(v->sub);
    shift(v, st == SW_SVC_STARTING  ? SW_SUB_STARTING_KILLED
             : st == SW_SVC_RUNNING ? SW_SUB_RUNNING_KILLED
                                    : SW_SUB_STOPPING_KILLED);
    sw_runtime_kill(v->sup->rt, v->pid);
}

/* ---- memory ---- */

sw_svc *svc_new(sw_supervisor *s, size_t i)
{
    sw_svc *v = calloc(1, sizeof *v);
    if (!v) abort();
    v->entry = s->reg->graph.services[i];
    v->reg = sw_registry_retain(s->reg);
    v->sup = s;
    v->index = i;
    uv_timer_init(s->loop, &v->timer);
    v->timer.data = v;
    v->open_handles = 1;
    svc_liveness_init(v);
    return v;
}

static void svc_closed(uv_handle_t *h)
{
    sw_svc *v = h->data;
    if (--v->open_handles) return;
    svc_drop_standby(v);
    free(v->reason);
    free(v->end.error);
    free(v->dependents);
    free(v->args.data);
    free(v->live.last_error);
    for (int k = 0; k < SW_SVC_ERRORS; k++) free(v->last_errors[k]);
    sw_registry_free(v->reg);
    free(v);
}

void svc_free(sw_svc *v)
{
    v->sub = SW_SUB_DISCARDED;
    sup_stop_disarm(v);
    if (v->preparing) return; /* when its standby is back */
    uv_close((uv_handle_t *)&v->timer, svc_closed);
    svc_liveness_close(v, svc_closed);
}
