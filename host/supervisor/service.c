/* One service's lifecycle (see service.h): what each sub-state means and shows, the one
 * logged transition (svc_enter) and the silent shifts within a public state, runs and their
 * ends, the standby made ahead for a crash loop, stops and kills. Builds on the runtime
 * (proc.h) and hands worker callbacks to the supervisor's queue (sup_internal.h). */
#include "service.h"

#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"
#include "sup_internal.h"
#include "units.h"

/* ---- sub-states (what each shows: service_view.c) ---- */

static bool for_good_sub(sw_svc_sub sub)
{
    return sub == SW_SUB_INACTIVE_FOR_GOOD || sub == SW_SUB_STOPPED_FOR_GOOD ||
           sub == SW_SUB_FAILED_FOR_GOOD;
}

/* Its end is a stop (CANCEL sent, or killed by the shutdown timeout), not a failure. */
static bool stop_requested(sw_svc_sub sub)
{
    return sub == SW_SUB_STOPPING || sub == SW_SUB_STOPPING_KILLED ||
           sub == SW_SUB_STARTING_KILLED || sub == SW_SUB_RUNNING_KILLED;
}

/* Killed by the supervisor for a reason of its own (v->reason): its end is that failure. */
static bool failed_by_host(sw_svc_sub sub)
{
    return sub == SW_SUB_START_TIMED_OUT || sub == SW_SUB_RUNNING_FAILED;
}

static bool killed(sw_svc_sub sub)
{
    return failed_by_host(sub) || sub == SW_SUB_STARTING_KILLED || sub == SW_SUB_RUNNING_KILLED ||
           sub == SW_SUB_STOPPING_KILLED;
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
static sw_svc_sub for_good_of(sw_svc_sub sub)
{
    switch (sub) {
    case SW_SUB_INACTIVE:
    case SW_SUB_BLOCKED: return SW_SUB_INACTIVE_FOR_GOOD;
    case SW_SUB_STOPPED: return SW_SUB_STOPPED_FOR_GOOD;
    case SW_SUB_FAILED: return SW_SUB_FAILED_FOR_GOOD;
    default: return sub;
    }
}

static sw_svc_sub down(sw_svc_state st)
{
    return st == SW_SVC_STOPPED ? SW_SUB_STOPPED : SW_SUB_FAILED;
}

/* No run under way or pending: neither starting, running, stopping nor in backoff. */
static bool at_rest(sw_svc_sub sub)
{
    return for_good_of(sub) != sub || for_good_sub(sub) || sub == SW_SUB_DISCARDED;
}

/* The one logged transition: v enters sub with reason (copied; NULL for none), logged as one
 * "service state" event with next_ns (-1: no restart scheduled). A down sub-state is the
 * _FOR_GOOD one if the run that ended was decided to be the last. */
static void svc_enter(sw_svc *v, sw_svc_sub sub, const char *reason, int64_t next_ns)
{
    if (v->ends_for_good && at_rest(sub)) { /* the run it was decided for is over */
        sub = for_good_of(sub);
        v->ends_for_good = false;
    }
    v->sub = sub;
    if (reason != v->reason) {
        free(v->reason);
        v->reason = reason ? strdup(reason) : NULL;
    }
    sup_log_state(v->sup, v->entry->id, sw_svc_view(sub), v->attempt + 1, reason, next_ns);
    sup_shutdown_touched(v);
}

void svc_block(sw_svc *v, const char *reason) { svc_enter(v, SW_SUB_BLOCKED, reason, -1); }

/* A change within the same public state: not logged. */
static void shift(sw_svc *v, sw_svc_sub sub)
{
    v->sub = sub;
    v->sup->changed = true;
}

void svc_mark_for_good(sw_svc *v)
{
    if (at_rest(v->sub)) shift(v, for_good_of(v->sub));
    else v->ends_for_good = true;
    v->sup->changed = true;
}

void svc_fresh(sw_svc *v)
{
    if (v->sub == SW_SUB_INACTIVE_FOR_GOOD) shift(v, v->reason ? SW_SUB_BLOCKED : SW_SUB_INACTIVE);
    else if (v->sub == SW_SUB_STOPPED_FOR_GOOD) shift(v, SW_SUB_STOPPED);
    else if (v->sub == SW_SUB_FAILED_FOR_GOOD) shift(v, SW_SUB_FAILED);
    v->ends_for_good = false;
    v->attempt = 0;
    v->sup->changed = true;
}

/* ---- timers (each an entry point: it ends with the supervisor's settle) ---- */

static void start_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!v->pid || (v->sub != SW_SUB_STARTING && v->sub != SW_SUB_STARTING_KILLED)) return;
    free(v->reason);
    v->reason = strdup("not ready within start_timeout");
    if (v->sub == SW_SUB_STARTING) shift(v, SW_SUB_START_TIMED_OUT);
    sw_runtime_kill(v->sup->rt, v->pid);
    sup_settle(v->sup);
}

static void stop_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!v->pid || sw_svc_view(v->sub) != SW_SVC_STOPPING) return;
    shift(v, SW_SUB_STOPPING_KILLED);
    sw_runtime_kill(v->sup->rt, v->pid);
    sup_settle(v->sup);
}

/* An ending run's stop_timeout: what is left of its tree is killed. */
static void tree_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (v->sub != SW_SUB_ENDING) return;
    shift(v, SW_SUB_ENDING_KILLED);
    sw_runtime_kill_tree(v->sup->rt, v->tree);
    sup_settle(v->sup);
}

/* stop_timeout (docs/supervision.md "Stopping and shutdown"): 0 kills at once without CANCEL
 * (OTP's brutal_kill); infinity waits as long as it takes (the shutdown timeout still bounds a
 * shutdown); past the shutdown timeout nothing waits any more. */
static int64_t stop_timeout(const sw_svc *v)
{
    return v->entry->as.service.lifecycle.stop_timeout_ns;
}

static bool kill_at_once(const sw_svc *v)
{
    return stop_timeout(v) == 0 || v->sup->shutdown_expired;
}

static void arm_stop_timeout(sw_svc *v, uv_timer_cb cb)
{
    if (stop_timeout(v) != SW_DURATION_INFINITE) sup_arm(&v->timer, cb, stop_timeout(v));
}

static void backoff_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    shift(v, v->sub == SW_SUB_BACKOFF_STOPPED ? SW_SUB_STOPPED : SW_SUB_FAILED);
    sup_settle(v->sup);
}

/* ---- launching ---- */

static void record_error(sw_svc *v, const char *reason)
{
    char **slot = &v->last_errors[v->n_errors++ % SW_SVC_ERRORS];
    free(*slot);
    *slot = strdup(reason);
}

/* The service's arguments, encoded once per entry (a restart reuses them). */
static int service_args(sw_svc *v)
{
    if (v->args.of == v->entry) return 0;
    sw_msgbuf args;
    char err[160];
    if (sw_msg_encode_nodes(v->entry->as.service.input, &args, err, sizeof err) != 0) {
        sw_msgbuf_free(&args);
        return -1;
    }
    free(v->args.data);
    v->args.data = args.data;
    v->args.len = args.len;
    v->args.of = v->entry;
    return 0;
}

void svc_drop_standby(sw_svc *v)
{
    if (!v->standby) return;
    sw_proc_discard_prepared(v->standby);
    v->standby = NULL;
}

/* The prepared process, if it was made for the current entry. */
static sw_proc *take_standby(sw_svc *v)
{
    sw_proc *p = v->standby;
    v->standby = NULL;
    if (p && v->standby_of != v->entry) {
        sw_proc_discard_prepared(p);
        p = NULL;
    }
    return p;
}

/* Creating a LuaJIT state is most of a restart's cost: a service that keeps failing gets its
 * next state made now, while this run is on a worker, so the restart itself only queues it. A
 * service that runs stably has none (attempt is back to 0). */
static void prepare_standby(sw_svc *v, const sw_spawn *sp)
{
    sw_supervisor *s = v->sup;
    if (v->standby || v->preparing || v->attempt == 0 || s->shutting_down) return;
    if (!s->preparer.started && sw_preparer_start(&s->preparer, s->rt, sup_on_prepared) != 0)
        return;
    v->standby_of = v->entry;
    if (sw_preparer_submit(&s->preparer, sp, v) == 0) v->preparing = true;
}

static void build_spawn(sw_svc *v, sw_spawn *sp)
{
    sw_supervisor *s = v->sup;
    const sw_service *svc = &v->entry->as.service;
    *sp = (sw_spawn){.entry = svc->process.target,
                     .registry = s->reg,
                     .service = v->entry->id,
                     .args = v->args.data,
                     .args_len = v->args.len,
                     .on_exit = sup_on_exit,
                     .on_ready = svc->lifecycle.ready == SW_READY_NOTIFY ? sup_on_ready : NULL,
                     .cb_arg = v,
                     .pool = svc->host.id ? sw_runtime_pool(s->rt, svc->host.id) : NULL};
    if (v->entry->kind == SW_KIND_HTTP_SERVICE) sw_runtime_http_service(s->rt, sp);
}

/* Starts the run with process p (prepared), or prepares one now if p is NULL. */
static void launch_run(sw_svc *v, sw_proc *p)
{
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    sw_spawn sp;
    build_spawn(v, &sp);
    char err[512] = "out of memory";
    if (!p) p = sw_proc_prepare(v->sup->rt, &sp, err, sizeof err);
    if (p) {
        v->tree = p->svc; /* no process of the previous run's tree is left (ENDING) */
        sw_tree_open(v->tree);
    }
    v->pid = p ? sw_proc_launch(p, &sp) : 0;
    if (!v->pid) {
        svc_enter(v, SW_SUB_FAILED_FOR_GOOD, err, -1);
        return;
    }
    prepare_standby(v, &sp);
    svc_health_begin(v);
    if (lc->ready == SW_READY_SPAWN) {
        svc_enter(v, SW_SUB_RUNNING, NULL, -1);
        svc_watchdog_arm(v);
        return;
    }
    sup_arm(&v->timer, start_timeout_fired, lc->start_timeout_ns);
}

void svc_start(sw_svc *v)
{
    if (v->run_start) v->restarts++;
    v->next_attempt_at = 0;
    v->run_policy.set = false; /* set_restart_policy holds for one run */
    v->held_for_change = false;
    svc_enter(v, SW_SUB_STARTING, NULL, -1);
    if (service_args(v) != 0) {
        svc_enter(v, SW_SUB_FAILED_FOR_GOOD, "input cannot be passed to the process", -1);
        return;
    }
    v->run_start = uv_hrtime();
    sw_proc *p = take_standby(v);
    if (!p && v->preparing) { /* the preparer is on it: launched when it comes, not made twice */
        shift(v, SW_SUB_AWAIT_STANDBY);
        return;
    }
    launch_run(v, p);
}

void svc_standby_arrived(sw_svc *v, sw_proc *p, const sw_entry *of)
{
    v->preparing = false;
    if (v->sub ==
        SW_SUB_AWAIT_STANDBY) { /* a start waits for it (a stop would have left this sub-state) */
        bool usable = p && of == v->entry;
        if (p && !usable) sw_proc_discard_prepared(p);
        shift(v, SW_SUB_STARTING);
        launch_run(v, usable ? p : NULL);
        return;
    }
    bool discarded = v->sub == SW_SUB_DISCARDED;
    bool keep = p && !discarded && !v->standby && !sw_svc_for_good(v) && !v->sup->shutting_down &&
                of == v->entry;
    if (keep) {
        v->standby = p;
        v->standby_of = of;
    } else if (p) {
        sw_proc_discard_prepared(p);
    }
    if (discarded) svc_free(v);
}

void svc_ready(sw_svc *v, uint64_t pid)
{
    if (pid != v->pid) return; /* about an earlier run */
    /* a start that timed out stays a failure: its kill is on its way */
    if (v->sub != SW_SUB_STARTING && v->sub != SW_SUB_STARTING_KILLED) return;
    uv_timer_stop(&v->timer);
    svc_enter(v, v->sub == SW_SUB_STARTING ? SW_SUB_RUNNING : SW_SUB_RUNNING_KILLED, NULL, -1);
    svc_watchdog_arm(v);
}

void svc_fail_run(sw_svc *v, const char *reason)
{
    if (!v->pid || (v->sub != SW_SUB_STARTING && v->sub != SW_SUB_RUNNING)) return;
    uv_timer_stop(&v->timer); /* a start timeout: this failure comes first */
    free(v->reason);
    v->reason = strdup(reason);
    shift(v, v->sub == SW_SUB_STARTING ? SW_SUB_START_TIMED_OUT : SW_SUB_RUNNING_FAILED);
    svc_liveness_stop(v);
    sw_runtime_kill(v->sup->rt, v->pid);
}

/* ---- ends and restarts ---- */

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
    if (delay)
        sup_arm(&v->timer, backoff_fired, delay); /* else the reconcile after this end starts it */
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
        svc_enter(v, for_good_of(down(st)), reason, -1);
    } else if (!ok && v->sup->hold_failures) {
        hold_for_change(v, reason);
    } else if (r->max_attempts > 0 && v->attempt + 1 >= r->max_attempts) {
        char gave_up[1100];
        snprintf(gave_up, sizeof gave_up, "gave up after %lld attempts: %s",
                 (long long)r->max_attempts, reason);
        svc_enter(v, for_good_of(down(st)), gave_up, -1);
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
    arm_stop_timeout(v, tree_timeout_fired);
    return true;
}

bool svc_ended(sw_svc *v, uint64_t pid, sw_exit_kind kind, bool retryable, const char *error,
               svc_end *out)
{
    out->to_group = false;
    if (pid != v->pid) return false; /* about an earlier run */
    uv_timer_stop(&v->timer);
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
    uv_timer_stop(&v->timer);
    char *error = v->end.error;
    v->end.error = NULL;
    v->sub = v->end.sub; /* judged as it ended; the kill of those left changes nothing */
    run_over(v, (sw_exit_kind)v->end.kind, v->end.retryable, error, out);
    free(error);
    return true;
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
        uv_timer_stop(&v->timer);
        svc_enter(v, SW_SUB_STOPPED, "stopped while waiting to restart", -1);
        return;
    }
    if (!v->pid || sw_svc_view(v->sub) == SW_SVC_STOPPING) return;
    uv_timer_stop(&v->timer);
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
        uv_timer_stop(&v->timer);
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
    if (v->preparing) return; /* when its standby is back */
    uv_close((uv_handle_t *)&v->timer, svc_closed);
    svc_liveness_close(v, svc_closed);
}
