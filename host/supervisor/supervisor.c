/* Service lifecycle: wanting, starting when dependencies run, readiness, ends and restarts,
 * stopping dependents-first. Every transition is one "service state" log event. */
#include "supervisor.h"

#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "message.h"
#include "proc.h"
#include "sup_internal.h"
#include "units.h"

typedef enum { MSG_EXIT, MSG_READY, MSG_STANDBY } msg_type;

struct sw_sup_msg {
    sw_sup_msg *next;
    msg_type type;
    sw_svc *svc;
    uint64_t pid;
    sw_exit_kind kind;
    bool retryable;
    char *error;
    sw_proc *proc;               /* MSG_STANDBY: the prepared process, or NULL */
    const sw_entry *entry;       /* MSG_STANDBY: the service entry it was made for */
};

static const char *const state_names[] = {"inactive", "starting", "running", "stopping", "stopped", "failed"};
const char *sw_svc_state_name(sw_svc_state st) { return state_names[st]; }

/* libuv times a timer from the loop's cached clock, which lags after a busy stretch: refresh
 * it so a timeout never fires early. */
void sup_arm(uv_timer_t *t, uv_timer_cb cb, int64_t ns)
{
    uv_update_time(t->loop);
    uv_timer_start(t, cb, (uint64_t)((ns + SW_NS_PER_MS - 1) / SW_NS_PER_MS), 0);
}

/* ---- events ---- */

void sup_log_state(sw_supervisor *s, const char *id, sw_svc_state st, int64_t attempt, const char *reason, int64_t next_ns)
{
    sw_log_field f[4];
    size_t n = 0;
    f[n++] = (sw_log_field){.key = "state", .type = SW_LF_STR, .s = state_names[st]};
    f[n++] = (sw_log_field){.key = "attempt", .type = SW_LF_INT, .i = attempt};
    if (reason) f[n++] = (sw_log_field){.key = "reason", .type = SW_LF_STR, .s = reason};
    if (next_ns >= 0) f[n++] = (sw_log_field){.key = "next_attempt", .type = SW_LF_NUM, .d = (double)next_ns / 1e9};
    sw_log_level level = st == SW_SVC_FAILED ? SW_LOG_WARN : SW_LOG_INFO;
    sw_log_write(s->log, level, id, "service state", f, n);
}

void sup_transition(sw_svc *v, sw_svc_state st, const char *reason, int64_t next_ns)
{
    v->state = st;
    if (reason != v->reason) {
        free(v->reason);
        v->reason = reason ? strdup(reason) : NULL;
    }
    sup_log_state(v->sup, v->entry->id, st, v->attempt + 1, reason, next_ns);
}

/* ---- messages from worker threads ---- */

static void post(sw_supervisor *s, sw_sup_msg *m)
{
    pthread_mutex_lock(&s->lock);
    if (s->tail) s->tail->next = m;
    else s->head = m;
    s->tail = m;
    pthread_mutex_unlock(&s->lock);
    sw_wake_send(&s->wake);
}

static void on_process_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    sw_svc *v = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return;
    *m = (sw_sup_msg){.type = MSG_EXIT, .svc = v, .pid = pid, .kind = info->kind, .retryable = info->retryable,
                      .error = info->error ? strdup(info->error) : NULL};
    post(v->sup, m);
}

static void on_process_ready(void *arg, uint64_t pid)
{
    sw_svc *v = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return;
    *m = (sw_sup_msg){.type = MSG_READY, .svc = v, .pid = pid};
    post(v->sup, m);
}

/* ---- starting ---- */

void sup_want(sw_supervisor *s, size_t i)
{
    sw_svc *v = s->svcs[i];
    if (v->wanted) return;
    v->wanted = true;
    if (v->group) sup_want_group(s, v->group); /* a child runs only with its whole group */
    const sw_graph *g = &s->reg->graph;
    for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) sup_want(s, g->edges[k].to);
}

static void start_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (v->state != SW_SVC_STARTING || !v->pid) return;
    free(v->reason);
    v->reason = strdup("not ready within start_timeout");
    v->killed_on_timeout = true;
    sw_runtime_kill(v->sup->rt, v->pid);
}

static void record_error(sw_svc *v, const char *reason)
{
    char **slot = &v->last_errors[v->n_errors++ % SW_SVC_ERRORS];
    free(*slot);
    *slot = strdup(reason);
}

int64_t sup_wall_ns(void)
{
    uv_timeval64_t tv;
    uv_gettimeofday(&tv);
    return tv.tv_sec * SW_NS_PER_S + (int64_t)tv.tv_usec * 1000;
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

/* ---- standby: a crash-looping service's next run, prepared while this one runs ---- */

void sup_drop_standby(sw_svc *v)
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
static void on_prepared(void *tag, sw_proc *p)
{
    sw_svc *v = tag;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) {
        if (p) sw_proc_discard_prepared(p);
        return; /* v stays `preparing`: it just never gets a standby */
    }
    *m = (sw_sup_msg){.type = MSG_STANDBY, .svc = v, .proc = p, .entry = v->standby_of};
    post(v->sup, m);
}

static void prepare_standby(sw_svc *v, const sw_spawn *sp)
{
    sw_supervisor *s = v->sup;
    if (v->standby || v->preparing || v->attempt == 0 || s->shutting_down) return;
    if (!s->preparer.started && sw_preparer_start(&s->preparer, s->rt, on_prepared) != 0) return;
    v->standby_of = v->entry;
    if (sw_preparer_submit(&s->preparer, sp, v) == 0) v->preparing = true;
}

/* A standby is back from the preparer: kept if it is still of use. */
static void launch_run(sw_svc *v, sw_proc *p);

static void standby_arrived(sw_svc *v, sw_sup_msg *m)
{
    v->preparing = false;
    if (v->awaiting_standby) { /* a start waits for it (a stop would have cleared the flag) */
        v->awaiting_standby = false;
        bool usable = m->proc && m->entry == v->entry;
        if (m->proc && !usable) sw_proc_discard_prepared(m->proc);
        launch_run(v, usable ? m->proc : NULL);
        sup_reconcile(v->sup);
        return;
    }
    bool keep = m->proc && !v->doomed && !v->standby && !v->final && !v->sup->shutting_down && m->entry == v->entry;
    if (keep) {
        v->standby = m->proc;
        v->standby_of = m->entry;
    } else if (m->proc) {
        sw_proc_discard_prepared(m->proc);
    }
    if (v->doomed) sup_svc_free(v);
}

static void build_spawn(sw_svc *v, sw_spawn *sp)
{
    sw_supervisor *s = v->sup;
    const sw_service *svc = &v->entry->as.service;
    *sp = (sw_spawn){.entry = svc->process.target, .registry = s->reg, .service = v->entry->id,
                     .args = v->args.data, .args_len = v->args.len, .on_exit = on_process_exit,
                     .on_ready = svc->lifecycle.ready == SW_READY_NOTIFY ? on_process_ready : NULL, .cb_arg = v,
                     .pool = svc->host.id ? sw_runtime_pool(s->rt, svc->host.id) : NULL};
}

/* Starts the run with process p (prepared), or prepares one now if p is NULL. */
static void launch_run(sw_svc *v, sw_proc *p)
{
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    sw_spawn sp;
    build_spawn(v, &sp);
    char err[512] = "out of memory";
    if (!p) p = sw_proc_prepare(v->sup->rt, &sp, err, sizeof err);
    v->pid = p ? sw_proc_launch(p, &sp) : 0;
    if (!v->pid) {
        v->final = true;
        sup_transition(v, SW_SVC_FAILED, err, -1);
        return;
    }
    prepare_standby(v, &sp);
    if (lc->ready == SW_READY_SPAWN) {
        sup_transition(v, SW_SVC_RUNNING, NULL, -1);
        return;
    }
    sup_arm(&v->timer, start_timeout_fired, lc->start_timeout_ns);
}

static void start(sw_svc *v)
{
    if (v->run_start) v->restarts++;
    v->next_attempt_at = 0;
    sup_transition(v, SW_SVC_STARTING, NULL, -1);
    if (service_args(v) != 0) {
        v->final = true;
        sup_transition(v, SW_SVC_FAILED, "input cannot be passed to the process", -1);
        return;
    }
    v->killed_on_timeout = false;
    v->stop_requested = false;
    v->run_start = uv_hrtime();
    sw_proc *p = take_standby(v);
    if (!p && v->preparing) { /* the preparer is on it: launched when it comes, not made twice */
        v->awaiting_standby = true;
        return;
    }
    launch_run(v, p);
}

/* A dependency that will not run by itself: failed for good or stopped by hand, or itself
 * blocked for good (inactive with a reason), so a whole chain above it is marked. */
static bool blocked_for_good(const sw_svc *d)
{
    if (d->waiting || d->pid || d->awaiting_standby) return false;
    if (d->final && (d->state == SW_SVC_FAILED || d->state == SW_SVC_STOPPED || d->state == SW_SVC_INACTIVE)) return true;
    return d->state == SW_SVC_INACTIVE && d->reason;
}

/* Why v cannot start yet: NULL if every dependency runs; sets *for_good when one is blocked
 * for good (v then stays inactive with that reason), preferring such a one to one that is
 * merely not running yet. */
static const sw_svc *pending_dependency(sw_supervisor *s, size_t i, bool *for_good)
{
    const sw_graph *g = &s->reg->graph;
    const sw_svc *pending = NULL;
    *for_good = false;
    for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) {
        const sw_svc *d = s->svcs[g->edges[k].to];
        if (d->state == SW_SVC_RUNNING) continue;
        if (blocked_for_good(d)) {
            *for_good = true;
            return d;
        }
        if (!pending) pending = d;
    }
    const sw_svc *sibling = sup_sibling_pending(s->svcs[i]);
    if (sibling && blocked_for_good(sibling)) {
        *for_good = true;
        return sibling;
    }
    return pending ? pending : sibling;
}

static bool startable(const sw_svc *v)
{
    return v->wanted && !v->final && !v->waiting && !v->pid && !v->held_by && !v->awaiting_standby &&
           (v->state == SW_SVC_INACTIVE || v->state == SW_SVC_STOPPED || v->state == SW_SVC_FAILED);
}

static void tell(sw_supervisor *s, const char *state)
{
    if (s->notify) s->notify(s->notify_arg, state);
}

/* READY=1 once every wanted service runs or has ended for good (a service in backoff is not
 * ready: a crash loop at start keeps `systemctl start` waiting, as it should). */
static void maybe_ready(sw_supervisor *s)
{
    if (s->ready_sent || s->shutting_down) return;
    for (size_t i = 0; i < s->n; i++) {
        const sw_svc *v = s->svcs[i];
        if (v->wanted && v->state != SW_SVC_RUNNING && !v->final && !(v->state == SW_SVC_INACTIVE && v->reason)) return;
    }
    s->ready_sent = true;
    tell(s, "READY=1");
}

/* Starts whatever can start; marks services whose dependency failed for good. */
void sup_reconcile(sw_supervisor *s)
{
    if (s->shutting_down) return;
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t i = 0; i < s->n; i++) {
            sw_svc *v = s->svcs[i];
            if (!startable(v)) continue;
            bool for_good;
            const sw_svc *dep = pending_dependency(s, i, &for_good);
            if (!dep) {
                start(v);
                changed = true;
            } else if (for_good) {
                char reason[512];
                bool sibling = dep == sup_sibling_pending(v);
                snprintf(reason, sizeof reason, "%s %s %s", sibling ? "earlier sibling" : "dependency", dep->entry->id,
                         state_names[dep->state]);
                if (!v->reason || strcmp(v->reason, reason) != 0) {
                    sup_transition(v, SW_SVC_INACTIVE, reason, -1);
                    changed = true; /* its own dependents are blocked too */
                }
            }
        }
    }
    sup_groups_settle(s);
    maybe_ready(s);
}

/* ---- ends and restarts ---- */

static void backoff_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    v->waiting = false;
    sup_reconcile(v->sup);
}

void sup_schedule_restart(sw_svc *v, const char *reason, sw_svc_state st)
{
    const sw_restart *r = &v->entry->as.service.lifecycle.restart;
    int64_t delay = sw_backoff_delay(r, v->attempt + 1, rand() / ((double)RAND_MAX + 1));
    v->next_attempt_at = sup_wall_ns() + delay;
    sup_transition(v, st, reason, delay); /* logged with the attempt that just ended */
    v->attempt++;
    if (delay == 0) return; /* no timer: the reconcile after this end starts it again */
    v->waiting = true;
    sup_arm(&v->timer, backoff_fired, delay);
}


static void ended(sw_svc *v, const sw_sup_msg *m)
{
    const sw_lifecycle *lc = &v->entry->as.service.lifecycle;
    uv_timer_stop(&v->timer);
    v->pid = 0;
    bool ok = m->kind == SW_EXIT_OK;
    if (v->stop_requested) {
        /* an explicit stop or shutdown: terminal, whatever the end looked like */
        sup_transition(v, SW_SVC_STOPPED, v->killed_on_timeout ? "killed after stop_timeout" : v->held_by ? "restarting" : "stopped", -1);
        sup_continue_stops(v->sup);
        return;
    }
    if ((int64_t)(uv_hrtime() - v->run_start) >= lc->stable_threshold_ns) v->attempt = 0; /* a stable run */
    const char *why = v->killed_on_timeout ? v->reason : ok ? "returned" : m->error ? m->error : "failed";
    char reason[1024];
    snprintf(reason, sizeof reason, "%s", why ? why : "failed");
    char *trace = strstr(reason, "\nstack traceback:");
    if (trace) { /* the state event keeps the message; the traceback is logged once, on its own */
        *trace = 0;
        sw_log_field f[2] = {{.key = "error", .type = SW_LF_STR, .s = reason},
                             {.key = "traceback", .type = SW_LF_STR, .s = strstr(m->error, "stack traceback:")}};
        sw_log_write(v->sup->log, SW_LOG_ERROR, v->entry->id, "process failed", f, 2);
    }
    if (!ok) record_error(v, reason);
    bool restart = lc->restart.policy == SW_RESTART_ALWAYS || (lc->restart.policy == SW_RESTART_ON_FAILURE && !ok);
    if (!ok && !m->retryable) restart = false;
    /* ended by itself during shutdown or a stop by hand (before its CANCEL came): it keeps
     * its own reason, and it is not restarted */
    if (v->sup->shutting_down || v->final) restart = false;
    sw_svc_state st = ok ? SW_SVC_STOPPED : SW_SVC_FAILED;
    if (restart && lc->restart.max_attempts > 0 && v->attempt + 1 >= lc->restart.max_attempts) {
        char gave_up[1100];
        snprintf(gave_up, sizeof gave_up, "gave up after %lld attempts: %s", (long long)lc->restart.max_attempts, reason);
        v->final = true;
        sup_transition(v, st, gave_up, -1);
    } else if (restart) {
        if (v->held_by) sup_transition(v, st, reason, -1); /* already part of a restart under way */
        else if (v->group) sup_group_child_ended(v, reason, st);
        else sup_schedule_restart(v, reason, st);
    } else {
        v->final = true;
        sup_transition(v, st, reason, -1);
    }
    if (v->final) sup_drop_standby(v);
    sup_continue_stops(v->sup);
    sup_reconcile(v->sup);
}

static void handle(sw_supervisor *s, sw_sup_msg *m)
{
    sw_svc *v = m->svc;
    if (m->type == MSG_STANDBY) {
        standby_arrived(v, m);
        return;
    }
    if (m->pid != v->pid) return; /* about an earlier run */
    if (m->type == MSG_READY) {
        if (v->state != SW_SVC_STARTING) return;
        uv_timer_stop(&v->timer);
        sup_transition(v, SW_SVC_RUNNING, NULL, -1);
        sup_reconcile(s);
        return;
    }
    ended(v, m);
}

static void on_wake(sw_wake *w)
{
    sw_supervisor *s = w->data;
    pthread_mutex_lock(&s->lock);
    sw_sup_msg *m = s->head;
    s->head = s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    while (m) {
        sw_sup_msg *next = m->next;
        handle(s, m);
        free(m->error);
        free(m);
        m = next;
    }
}

/* ---- stopping ---- */

static void stop_timeout_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (v->state != SW_SVC_STOPPING || !v->pid) return;
    v->killed_on_timeout = true;
    sw_runtime_kill(v->sup->rt, v->pid);
}

void sup_begin_stop(sw_svc *v)
{
    sw_supervisor *s = v->sup;
    sup_drop_standby(v);
    if (v->awaiting_standby) { /* its process is not made yet: it never runs */
        v->awaiting_standby = false;
        sup_transition(v, SW_SVC_STOPPED, "stopped before it started", -1);
        return;
    }
    if (v->waiting) { /* waiting to restart: nothing runs, just cancel the restart */
        uv_timer_stop(&v->timer);
        v->waiting = false;
        sup_transition(v, SW_SVC_STOPPED, "stopped while waiting to restart", -1);
        return;
    }
    if (!v->pid || v->state == SW_SVC_STOPPING) return;
    v->stop_requested = true;
    uv_timer_stop(&v->timer);
    sup_transition(v, SW_SVC_STOPPING, s->shutting_down ? "shutdown" : "stop requested", -1);
    sw_delivery *d = sw_delivery_new(SW_DLV_CANCEL, 0, 0, NULL, NULL, 0);
    if (d) sw_runtime_deliver(s->rt, v->pid, d);
    sup_arm(&v->timer, stop_timeout_fired, v->entry->as.service.lifecycle.stop_timeout_ns);
}

bool sw_svc_active(const sw_svc *v) { return v->pid != 0 || v->state == SW_SVC_STOPPING || v->awaiting_standby; }

/* Stops every service in `stopping` whose dependents and later siblings have all stopped. */
bool sup_stop_wave(sw_supervisor *s, const bool *stopping)
{
    bool any_active = false;
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!stopping[i]) continue;
        if (v->waiting || v->awaiting_standby) sup_begin_stop(v);
        if (!sw_svc_active(v)) continue;
        any_active = true;
        bool others_down = !sup_later_sibling_active(v, stopping);
        for (size_t k = 0; k < v->n_dependents && others_down; k++)
            if (stopping[v->dependents[k]] && sw_svc_active(s->svcs[v->dependents[k]])) others_down = false;
        if (others_down) sup_begin_stop(v);
    }
    return any_active;
}

static void check_shutdown(sw_supervisor *s);

/* After an end or a hold's timer: a shutdown, a stop by hand or a restart in progress goes on
 * with its next wave. The sets: what stop_one made unwanted and final, and what groups and
 * restarts by hand hold. */
void sup_continue_stops(sw_supervisor *s)
{
    sup_reap_retired(s);
    if (s->shutting_down) {
        check_shutdown(s);
        return;
    }
    bool *set = calloc(s->n ? s->n : 1, 1);
    if (!set) return;
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        set[i] = (!v->wanted && v->final) || v->held_by;
        any = any || set[i];
    }
    if (any) sup_stop_wave(s, set);
    free(set);
    sup_release_holds(s);
}

static void check_shutdown(sw_supervisor *s)
{
    if (!s->shutting_down) return;
    bool *all = malloc(s->n ? s->n : 1);
    if (!all) return;
    memset(all, 1, s->n);
    bool any = sup_stop_wave(s, all);
    free(all);
    sup_groups_settle(s);
    if (any || s->n_retired || s->done) return;
    s->done = true;
    sw_preparer_stop(&s->preparer); /* before the runtime goes; what it had comes back as messages */
    uv_timer_stop(&s->shutdown_timer);
    uv_stop(s->loop);
}

static void kill_now(sw_svc *v)
{
    if (!v->pid) return;
    v->stop_requested = true;
    v->killed_on_timeout = true;
    sw_runtime_kill(v->sup->rt, v->pid);
}

static void shutdown_timed_out(uv_timer_t *t)
{
    sw_supervisor *s = t->data;
    sw_log_write(s->log, SW_LOG_WARN, NULL, "shutdown timeout: killing what is left", NULL, 0);
    for (size_t i = 0; i < s->n; i++) kill_now(s->svcs[i]);
    for (size_t i = 0; i < s->n_retired; i++) kill_now(s->retired[i]);
}

void sw_supervisor_shutdown(sw_supervisor *s)
{
    if (s->shutting_down) return;
    s->shutting_down = true;
    sw_log_write(s->log, SW_LOG_INFO, NULL, "shutting down", NULL, 0);
    tell(s, "STOPPING=1");
    sup_groups_cancel(s);
    for (size_t i = 0; i < s->n; i++) sup_drop_standby(s->svcs[i]);
    sup_arm(&s->shutdown_timer, shutdown_timed_out, s->shutdown_timeout_ns);
    check_shutdown(s);
}

/* ---- by hand ---- */

static sw_svc *find(sw_supervisor *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->svcs[i]->entry->id, id) == 0) return s->svcs[i];
    return NULL;
}

/* A start by hand: i and everything it needs, transitively, are wanted again and lose an
 * earlier stop by hand or failure for good (unless they run or wait to restart). */
static void want_by_hand(sw_supervisor *s, size_t i, bool *seen)
{
    if (seen[i]) return;
    seen[i] = true;
    sw_svc *v = s->svcs[i];
    v->wanted = true;
    if (v->group) sup_want_group(s, v->group);
    if (!v->pid && !v->waiting) {
        v->final = false;
        v->attempt = 0;
    }
    const sw_graph *g = &s->reg->graph;
    for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) want_by_hand(s, g->edges[k].to, seen);
}

int sw_supervisor_start_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    if (v->waiting || v->pid) return 0; /* already running or about to: never a second instance */
    bool *seen = calloc(s->n ? s->n : 1, 1);
    if (!seen) return -1;
    want_by_hand(s, v->index, seen);
    free(seen);
    sup_reconcile(s);
    return 0;
}

static void mark_dependents(sw_supervisor *s, size_t i, bool *set)
{
    if (set[i]) return;
    set[i] = true;
    for (size_t k = 0; k < s->svcs[i]->n_dependents; k++) mark_dependents(s, s->svcs[i]->dependents[k], set);
}

int sw_supervisor_stop_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    bool *set = calloc(s->n ? s->n : 1, 1);
    if (!set) return -1;
    mark_dependents(s, v->index, set);
    for (size_t i = 0; i < s->n; i++) {
        if (!set[i]) continue;
        s->svcs[i]->final = true; /* an explicit stop is terminal: they stay stopped */
        s->svcs[i]->wanted = false;
    }
    sup_stop_wave(s, set);
    free(set);
    return 0;
}

/* A restart by hand: the service and its dependents stop (dependents first) and are held
 * until all of them are down; then they start again in dependency order. */
int sw_supervisor_restart_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    if (s->shutting_down) return 0;
    bool *set = calloc(s->n ? s->n : 1, 1);
    if (!set) return -1;
    mark_dependents(s, v->index, set);
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *d = s->svcs[i];
        if (!set[i] || !(d == v || d->wanted)) continue;
        d->held_by = &s->by_hand;
        if (!d->pid && !d->waiting) {
            d->final = false;
            d->attempt = 0;
        }
    }
    free(set);
    bool *seen = calloc(s->n ? s->n : 1, 1);
    if (!seen) return -1;
    want_by_hand(s, v->index, seen);
    free(seen);
    sup_continue_stops(s);
    return 0;
}

sw_svc *sw_supervisor_find(sw_supervisor *s, const char *id) { return find(s, id); }

/* ---- set-up ---- */

/* The services' dependents lists, from the graph of the current snapshot (again after a
 * reload). */
void sup_build_dependents(sw_supervisor *s)
{
    const sw_graph *g = &s->reg->graph;
    for (size_t i = 0; i < s->n; i++) {
        free(s->svcs[i]->dependents);
        s->svcs[i]->dependents = NULL;
        s->svcs[i]->n_dependents = 0;
    }
    for (size_t e = 0; e < g->n_edges; e++) s->svcs[g->edges[e].to]->n_dependents++;
    for (size_t i = 0; i < s->n; i++) {
        s->svcs[i]->dependents = calloc(s->svcs[i]->n_dependents ? s->svcs[i]->n_dependents : 1, sizeof(size_t));
        if (!s->svcs[i]->dependents) abort();
        s->svcs[i]->n_dependents = 0;
    }
    for (size_t e = 0; e < g->n_edges; e++) {
        sw_svc *d = s->svcs[g->edges[e].to];
        d->dependents[d->n_dependents++] = g->edges[e].from;
    }
}

sw_svc *sup_svc_new(sw_supervisor *s, size_t i)
{
    sw_svc *v = calloc(1, sizeof *v);
    if (!v) abort();
    v->entry = s->reg->graph.services[i];
    v->reg = sw_registry_retain(s->reg);
    v->sup = s;
    v->index = i;
    uv_timer_init(s->loop, &v->timer);
    v->timer.data = v;
    return v;
}

static void svc_closed(uv_handle_t *h)
{
    sw_svc *v = h->data;
    sup_drop_standby(v);
    free(v->reason);
    free(v->dependents);
    free(v->args.data);
    for (int k = 0; k < SW_SVC_ERRORS; k++) free(v->last_errors[k]);
    sw_registry_free(v->reg);
    free(v);
}

void sup_svc_free(sw_svc *v)
{
    v->doomed = true;
    if (!v->preparing) uv_close((uv_handle_t *)&v->timer, svc_closed); /* else when its standby is back */
}

int sw_supervisor_init(sw_supervisor *s, uv_loop_t *loop, sw_runtime *rt, const sw_registry *reg, sw_log *log)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->rt = rt;
    s->reg = sw_registry_retain(reg);
    s->log = log;
    s->n = reg->graph.n;
    s->shutdown_timeout_ns = 30 * SW_NS_PER_S;
    s->svcs = calloc(s->n ? s->n : 1, sizeof *s->svcs);
    if (!s->svcs) return -1;
    pthread_mutex_init(&s->lock, NULL);
    if (sw_wake_init(loop, &s->wake, on_wake) != 0) return -1;
    s->wake.data = s;
    uv_timer_init(loop, &s->shutdown_timer);
    s->shutdown_timer.data = s;
    s->by_hand.sup = s;
    for (size_t i = 0; i < s->n; i++) s->svcs[i] = sup_svc_new(s, i);
    sup_build_dependents(s);
    return sup_groups_build(s);
}

void sw_supervisor_start(sw_supervisor *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!v->group && v->entry->as.service.lifecycle.auto_start) sup_want(s, i);
    }
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (!g->parent && g->entry->as.group.lifecycle.auto_start) sup_want_group(s, g);
    }
    sup_reconcile(s);
}

void sw_supervisor_close(sw_supervisor *s)
{
    sw_preparer_stop(&s->preparer);
    on_wake(&s->wake); /* free messages still queued (standbys are discarded: shutting down) */
    sw_wake_close(&s->wake, NULL);
    uv_close((uv_handle_t *)&s->shutdown_timer, NULL);
    for (size_t i = 0; i < s->n; i++) sup_svc_free(s->svcs[i]);
    for (size_t i = 0; i < s->n_retired; i++) sup_svc_free(s->retired[i]);
    sup_groups_close(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    sup_groups_free(s);
    free(s->svcs);
    free(s->retired);
    sw_registry_free(s->reg);
    pthread_mutex_destroy(&s->lock);
}
