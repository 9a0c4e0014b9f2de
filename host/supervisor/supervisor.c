/* The supervisor's entry points (see supervisor.h): the workers' messages, taken in batches;
 * start, shutdown and its timeout; applying a reload; set-up and close (the by-hand
 * operations are sup_by_hand.c's). Each entry point changes what it must and ends with sup_settle (sup_apply.c): the one
 * reconcile, then the change subscriber. A service's own lifecycle is service.c's; groups and
 * reload decide in sup_group.c and sup_reload.c. */
#include "supervisor.h"

#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "service.h"
#include "sup_internal.h"
#include "units.h"

typedef enum {
    MSG_EXIT,
    MSG_READY,
    MSG_STANDBY,
    MSG_TREE_GONE,
    MSG_SERVICE,   /* a request of the `service` module */
    MSG_VALIDATED, /* a reload's validator ended */
    MSG_HEALTH     /* a health check ended */
} msg_type;

struct sw_sup_msg {
    sw_sup_msg *next;
    msg_type type;
    sw_svc *svc;
    uint64_t pid;
    sw_exit_kind kind;
    bool retryable;
    char *error;
    sw_proc *proc;         /* MSG_STANDBY: the prepared process, or NULL */
    const sw_entry *entry; /* MSG_STANDBY: the service entry it was made for */
    sw_svc_request rq;     /* MSG_SERVICE; rq.service is the message's own copy */
};

/* ---- messages from worker threads ---- */

static void post(sw_supervisor *s, sw_sup_msg *m)
{
    pthread_mutex_lock(&s->lock);
    if (s->tail) s->tail->next = m;
    else s->head = m;
    s->tail = m;
    atomic_store_explicit(&s->posted, true, memory_order_relaxed);
    pthread_mutex_unlock(&s->lock);
    sw_park_wake(&s->park); /* writes only when the loop's thread is parked */
}

void sup_on_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    sw_svc *v = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return;
    *m = (sw_sup_msg){.type = MSG_EXIT,
                      .svc = v,
                      .pid = pid,
                      .kind = info->kind,
                      .retryable = info->retryable,
                      .error = info->error ? strdup(info->error) : NULL};
    post(v->sup, m);
}

void sup_on_ready(void *arg, uint64_t pid)
{
    sw_svc *v = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return;
    *m = (sw_sup_msg){.type = MSG_READY, .svc = v, .pid = pid};
    post(v->sup, m);
}

void sup_on_prepared(void *tag, sw_proc *p)
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

void sup_on_tree_gone(void *arg)
{
    sw_svc *v = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return; /* the ending run's stop timeout kills what is left; the end is then lost */
    *m = (sw_sup_msg){.type = MSG_TREE_GONE, .svc = v};
    post(v->sup, m);
}

int sw_supervisor_service_request(void *arg, const sw_svc_request *rq)
{
    sw_supervisor *s = arg;
    sw_sup_msg *m = calloc(1, sizeof *m);
    char *id = m ? strdup(rq->service) : NULL;
    if (!id) {
        free(m);
        return -1;
    }
    *m = (sw_sup_msg){.type = MSG_SERVICE, .rq = *rq};
    m->rq.service = id;
    post(s, m);
    return 0;
}

/* A validator's or health check's end, told by its pid. */
static void post_end(sw_supervisor *s, msg_type type, uint64_t pid, const sw_exit_info *info)
{
    sw_sup_msg *m = calloc(1, sizeof *m);
    if (!m) return; /* its timeout (start_timeout, health.timeout) counts it as failed */
    *m = (sw_sup_msg){.type = type,
                      .pid = pid,
                      .kind = info->kind,
                      .error = info->error ? strdup(info->error) : NULL};
    post(s, m);
}

void sup_on_validator_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    post_end(arg, MSG_VALIDATED, pid, info);
}

void sup_on_health_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    post_end(arg, MSG_HEALTH, pid, info);
}

/* A request of a service's process, about its current run (a service a reload removed is
 * found no more: its request is dropped). */
static void service_request(sw_supervisor *s, const sw_svc_request *rq)
{
    sw_svc *v = sw_supervisor_find(s, rq->service);
    if (v) svc_request(v, rq);
}

/* A run ended: its own policy judges; a restart-worthy end in a group is its group's to plan. */
static void ended(sw_supervisor *s, sw_svc *v, const sw_sup_msg *m)
{
    svc_end end;
    bool changed = m->type == MSG_TREE_GONE
                       ? svc_tree_gone(v, &end)
                       : svc_ended(v, m->pid, m->kind, m->retryable, m->error, &end);
    if (!changed || !end.to_group) return;
    sup_plan p = {0};
    sup_group_child_ended(v, end.st, end.reason, &p);
    sup_apply(s, &p);
    if (sw_svc_for_good(v)) svc_drop_standby(v); /* its group failed for good */
}

static void handle(sw_supervisor *s, sw_sup_msg *m)
{
    if (m->type == MSG_SERVICE || m->type == MSG_VALIDATED || m->type == MSG_HEALTH)
        s->scan_all = true; /* they may change more than one service's own state */
    if (m->type == MSG_STANDBY) svc_standby_arrived(m->svc, m->proc, m->entry);
    else if (m->type == MSG_READY) svc_ready(m->svc, m->pid);
    else if (m->type == MSG_SERVICE) service_request(s, &m->rq);
    else if (m->type == MSG_VALIDATED) sup_validate_ended(s, m->pid, m->kind, m->error);
    else if (m->type == MSG_HEALTH) sup_health_ended(s, m->pid, m->kind, m->error);
    else ended(s, m->svc, m);
}

/* Handles the queued messages. */
size_t sup_drain(sw_supervisor *s)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    sw_sup_msg *m = s->head;
    s->head = s->tail = NULL;
    atomic_store_explicit(&s->posted, false, memory_order_relaxed);
    pthread_mutex_unlock(&s->lock);
    s->small_batch = m && (!m->next || !m->next->next);
    while (m) {
        sw_sup_msg *next = m->next;
        handle(s, m);
        /* A service that became ready lets its dependents start now, before a later message
         * of the batch (its own end, for a one-shot that returns right after ready()) can
         * make it look as if it never ran: as when each message was settled on its own. */
        if ((m->type == MSG_READY || m->type == MSG_SERVICE || m->type == MSG_HEALTH) && s->changed)
            sup_settle(s);
        free(m->error);
        free((char *)m->rq.service);
        free(m);
        m = next;
        n++;
    }
    return n; /* small_batch stays for the caller's settle, which launches the restarts */
}

/* Entry point: a batch of worker messages. A batch that changed nothing (a late message about
 * an earlier run, a standby kept for later) has nothing to reconcile. */
static void take_batch(sw_supervisor *s)
{
    uint64_t launches = s->launches;
    s->local = true; /* the reconcile looks at the services these messages changed */
    size_t n = sup_drain(s);
    if (s->changed) sup_settle(s);
    s->local = false;
    s->small_batch = false;
    /* A message or two answered by a launch (a restart, a dependent started on a ready): its news
     * is a slice away; a message that launched nothing (the preparer's standby) while that
     * news is awaited keeps it awaited. Bulk batches (a shutdown's exits, a cold start's
     * readies) have more on the way anyway, and gain from taking them together rather than
     * spinning for each. */
    s->expecting = n <= 2 && (s->launches != launches || s->expecting);
}

static void on_wake(sw_wake *w) { take_batch(w->data); }

/* Relaxed: the park's fences order it (worker_park.c). */
static bool has_messages(void *arg)
{
    sw_supervisor *s = arg;
    return atomic_load_explicit(&s->posted, memory_order_relaxed);
}

static void stop_no_wait(uv_idle_t *h) { uv_idle_stop(h); }

/* Before the loop's poll: the supervisor's thread waits as an idle worker does
 * (docs/architecture.md "Waking a worker"). After a batch that expects a reply (take_batch)
 * it spins while a worker is awake; else, or when the spin finds
 * nothing, it raises the park's flag and lets the poll block. Messages found are taken here,
 * and the poll then only looks (an active idle handle makes its timeout 0), so timers and
 * sockets still get their turn between batches. */
static void on_before_poll(uv_prepare_t *h)
{
    sw_supervisor *s = h->data;
    bool found = s->expecting && sw_park_spin(&s->park, has_messages, s);
    if (!found) s->expecting = false;
    if (!found && sw_park_sleep_begin(&s->park, has_messages, s)) {
        s->parked = true;
        return;
    }
    take_batch(s);
    uv_idle_start(&s->no_wait, stop_no_wait);
}

static void on_after_poll(uv_check_t *h)
{
    sw_supervisor *s = h->data;
    if (!s->parked) return;
    s->parked = false;
    sw_park_sleep_end(&s->park);
}

/* ---- start and shutdown ---- */

/* Entry point. */
void sw_supervisor_start(sw_supervisor *s)
{
    sup_plan p = {0};
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!v->group && v->entry->as.service.lifecycle.auto_start)
            sup_plan_add(&p, (sup_step){.kind = SUP_WANT, .svc = v});
    }
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (!g->parent && g->entry->as.group.lifecycle.auto_start)
            sup_plan_add(&p, (sup_step){.kind = SUP_WANT, .grp = g});
    }
    sup_apply(s, &p);
    sup_settle(s);
}

/* Entry point: the shutdown timeout. */
static void shutdown_timed_out(uv_timer_t *t)
{
    sw_supervisor *s = t->data;
    sw_log_write(s->log, SW_LOG_WARN, NULL, "shutdown timeout: killing what is left", NULL, 0);
    s->shutdown_expired = true;
    for (size_t i = 0; i < s->n; i++) svc_kill(s->svcs[i]);
    for (size_t i = 0; i < s->n_retired; i++) svc_kill(s->retired[i]);
    sup_settle(s);
}

/* Entry point (a signal). */
void sw_supervisor_shutdown(sw_supervisor *s)
{
    if (s->shutting_down) return;
    s->shutting_down = true;
    s->changed = true;
    sw_log_write(s->log, SW_LOG_INFO, NULL, "shutting down", NULL, 0);
    sup_validate_cancel(s, "the host is shutting down");
    if (s->notify) s->notify(s->notify_arg, "STOPPING=1");
    sup_plan p = {0}; /* no group restarts any more */
    for (size_t k = 0; k < s->n_grps; k++) {
        sup_plan_add(&p, (sup_step){.kind = SUP_GRP_RESTART, .grp = s->grps[k], .delay = -1});
        sup_plan_add(&p, (sup_step){.kind = SUP_GRP_SET_RESTART, .grp = s->grps[k], .delay = -1});
    }
    sup_apply(s, &p);
    for (size_t i = 0; i < s->n; i++) svc_drop_standby(s->svcs[i]);
    sup_arm(&s->shutdown_timer, shutdown_timed_out, s->shutdown_timeout_ns);
    sup_settle(s);
}

/* ---- reload (entry point: a signal or a control request) ---- */

static void retire(sw_supervisor *s, sw_svc *v, size_t level)
{
    sw_svc **r = realloc(s->retired, (s->n_retired + 1) * sizeof *r);
    if (!r) abort();
    s->retired = r;
    s->retired[s->n_retired++] = v;
    svc_drop_standby(v);
    v->index = (size_t)-1;
    v->retired_level = level;
    v->wanted = false;
    svc_mark_for_good(v); /* an end of its own is not restarted either */
    v->held_by = NULL;
    v->group = NULL;
    free(v->dependents);
    v->dependents = NULL;
    v->n_dependents = 0;
}

/* The new service list: old services matched by id keep their state and timers. */
static void rebuild(sw_supervisor *s, const sup_reload *r)
{
    const sw_registry *new = r->reg;
    sw_svc **svcs = calloc(new->graph.n ? new->graph.n : 1, sizeof *svcs);
    if (!svcs) abort();
    for (size_t i = 0; i < new->graph.n; i++) {
        sw_svc *v = r->old_of[i];
        if (!v) {
            svcs[i] = svc_new(s, i);
            continue;
        }
        v->entry = new->graph.services[i];
        sw_registry_free(v->reg);
        v->reg = sw_registry_retain(new);
        v->index = i;
        v->group = NULL;
        v->pos = 0;
        if (v->held_by != &s->by_hand) v->held_by = NULL; /* the old groups are gone */
        svcs[i] = v;
    }
    for (size_t k = 0; k < r->n_removed; k++) retire(s, r->removed[k], r->removed_level[k]);
    free(s->svcs);
    s->svcs = svcs;
    s->n = new->graph.n;
}

static void build_dependents(sw_supervisor *s);

/* The new snapshot in place: services matched, removed ones retired, groups and dependents
 * built again, the runtime given the new registry and policies. */
static void install(sw_supervisor *s, const sup_reload *r)
{
    const sw_registry *old = s->reg;
    s->reg = r->reg; /* our reference */
    s->changed = true;
    rebuild(s, r);
    sup_groups_drop(s);
    sup_groups_build(s);
    build_dependents(s);
    sw_runtime_set_registry(s->rt, r->reg);
    sw_runtime_set_security(s->rt, r->policies); /* running processes see it at their next check */
    sw_registry_free(old);
}

static void log_reloaded(sw_supervisor *s, const sup_reload *r, bool restart_all)
{
    sw_log_field f[4] = {{.key = "added", .type = SW_LF_INT, .i = (int64_t)r->added},
                         {.key = "removed", .type = SW_LF_INT, .i = (int64_t)r->n_removed},
                         {.key = "changed", .type = SW_LF_INT, .i = (int64_t)r->n_changed},
                         {.key = "restart_all", .type = SW_LF_BOOL, .b = restart_all}};
    sw_log_write(s->log, SW_LOG_INFO, NULL, "reloaded", f, 4);
}

/* How a reload ended, for whoever waits on it (the control socket). */
static void record_outcome(sw_supervisor *s, bool ok, const char *errors)
{
    s->reloads++;
    s->reload_ok = ok;
    free(s->reload_errors);
    s->reload_errors = errors ? strdup(errors) : NULL;
    s->changed = true; /* the subscriber hears of it */
}

void sup_reload_apply(sw_supervisor *s, sup_reload *r, bool restart_all)
{
    install(s, r);
    sup_plan p = {0};
    sup_reload_steps(s, r->changed, &p);
    sup_apply(s, &p);
    log_reloaded(s, r, restart_all);
    sup_reload_free(r);
    record_outcome(s, true, NULL);
    sup_settle(s);
    if (s->notify && s->ready_sent) s->notify(s->notify_arg, "READY=1"); /* else when it settles */
}

void sup_reload_rejected(sw_supervisor *s, const char *errors)
{
    record_outcome(s, false, errors);
    if (s->notify && s->ready_sent && !s->shutting_down) s->notify(s->notify_arg, "READY=1");
}

int sw_supervisor_reload(sw_supervisor *s, bool restart_all, char **errors)
{
    if (s->shutting_down || s->validating) {
        const char *why = s->shutting_down ? "the host is shutting down"
                                           : "a reload is being validated: try again when it ends";
        if (!s->shutting_down) {
            sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = why};
            sw_log_write(s->log, SW_LOG_WARN, NULL, "reload refused", &f, 1);
        }
        if (errors) *errors = strdup(why);
        return -1;
    }
    if (s->notify) s->notify(s->notify_arg, "RELOADING=1");
    sup_reload r;
    char *text = NULL;
    if (sup_reload_plan(s, restart_all, &r, &text) != 0) {
        sup_reload_rejected(s, text);
        if (errors) *errors = text;
        else free(text);
        return -1;
    }
    if (sup_validate_begin(s, &r, restart_all)) return 1; /* applied or rejected later */
    sup_reload_apply(s, &r, restart_all);
    return 0;
}

/* ---- set-up ---- */

/* The services' dependents lists, from the graph of the current snapshot (again after a
 * reload). */
static void build_dependents(sw_supervisor *s)
{
    const sw_graph *g = &s->reg->graph;
    for (size_t i = 0; i < s->n; i++) {
        free(s->svcs[i]->dependents);
        s->svcs[i]->dependents = NULL;
        s->svcs[i]->n_dependents = 0;
    }
    for (size_t e = 0; e < g->n_edges; e++) s->svcs[g->edges[e].to]->n_dependents++;
    for (size_t i = 0; i < s->n; i++) {
        s->svcs[i]->dependents =
            calloc(s->svcs[i]->n_dependents ? s->svcs[i]->n_dependents : 1, sizeof(size_t));
        if (!s->svcs[i]->dependents) abort();
        s->svcs[i]->n_dependents = 0;
    }
    for (size_t e = 0; e < g->n_edges; e++) {
        sw_svc *d = s->svcs[g->edges[e].to];
        d->dependents[d->n_dependents++] = g->edges[e].from;
    }
}

int sw_supervisor_init(sw_supervisor *s, uv_loop_t *loop, sw_runtime *rt, const sw_registry *reg,
                       sw_log *log)
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
    atomic_init(&s->posted, false);
    if (sw_park_init_cb(&s->park, loop, on_wake) != 0) return -1;
    s->park.wake.data = s;
    uv_prepare_init(loop, &s->before_poll);
    uv_check_init(loop, &s->after_poll);
    uv_idle_init(loop, &s->no_wait);
    s->before_poll.data = s->after_poll.data = s;
    uv_prepare_start(&s->before_poll, on_before_poll);
    uv_check_start(&s->after_poll, on_after_poll);
    sw_park_awake_begin(); /* the loop's thread, until close */
    uv_timer_init(loop, &s->shutdown_timer);
    s->shutdown_timer.data = s;
    s->by_hand.sup = s;
    s->scan_all = true;
    for (size_t i = 0; i < s->n; i++) s->svcs[i] = svc_new(s, i);
    build_dependents(s);
    sup_groups_build(s);
    return 0;
}

void sw_supervisor_on_change(sw_supervisor *s, void (*fn)(void *arg), void *arg)
{
    s->on_change = fn;
    s->on_change_arg = arg;
}

void sw_supervisor_close(sw_supervisor *s)
{
    s->on_change = NULL;
    sw_preparer_stop(&s->preparer);
    sup_drain(s); /* frees messages still queued (standbys are discarded: shutting down) */
    sup_validate_cancel(s, "the host is shutting down");
    if (s->parked) sw_park_sleep_end(&s->park);
    s->parked = false;
    sw_park_awake_end();
    sw_park_close(&s->park);
    uv_close((uv_handle_t *)&s->before_poll, NULL);
    uv_close((uv_handle_t *)&s->after_poll, NULL);
    uv_close((uv_handle_t *)&s->no_wait, NULL);
    uv_close((uv_handle_t *)&s->shutdown_timer, NULL);
    for (size_t i = 0; i < s->n; i++) svc_free(s->svcs[i]);
    for (size_t i = 0; i < s->n_retired; i++) svc_free(s->retired[i]);
    sup_stop_close(s);
    sup_groups_drop(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    free(s->svcs);
    free(s->retired);
    sw_registry_free(s->reg);
    free(s->reload_errors);
    sup_shutdown_free(s);
    free(s->touched);
    pthread_mutex_destroy(&s->lock);
}
