/* Launching a run of one service (service.h): its arguments, its process (the standby made
 * ahead for a crash loop, or a new one), readiness, and a run failed by the supervisor. The
 * transitions are service.c's (service_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "proc.h"
#include "runtime.h"
#include "service_internal.h"

/* ---- launching ---- */

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
 * service that runs stably has none (attempt is back to 0). In a batch of one or two messages
 * (one crash loop: the supervisor's thread would spin for the exit anyway, supervisor.c) it
 * is made right here, which spares the preparer's thread a wake-up for each restart; in bulk,
 * the preparer's thread makes it beside this one. */
static void prepare_standby(sw_svc *v, const sw_spawn *sp)
{
    sw_supervisor *s = v->sup;
    if (v->standby || v->preparing || v->attempt == 0 || s->shutting_down) return;
    if (s->small_batch) {
        char err[8]; /* a failure is made again, and reported, by its launch */
        v->standby = sw_proc_prepare(s->rt, sp, err, sizeof err);
        v->standby_of = v->entry;
        return;
    }
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

void svc_prepare_ahead(sw_svc *const *vs, size_t n)
{
    enum { MOST = 64 };
    sw_spawn sp[MOST];
    sw_proc *made[MOST];
    sw_svc *of[MOST];
    size_t k = 0;
    for (size_t i = 0; i < n && k < MOST; i++) {
        sw_svc *v = vs[i];
        if (v->standby || v->preparing || service_args(v) != 0) continue;
        build_spawn(v, &sp[k]);
        of[k++] = v;
    }
    if (!k) return;
    sw_supervisor *s = of[0]->sup;
    if (k > 1 &&
        (s->preparer.started || sw_preparer_start(&s->preparer, s->rt, sup_on_prepared) == 0)) {
        sw_preparer_batch(&s->preparer, sp, made, k);
    } else {
        char err[8]; /* a failure is made again, and reported, by its launch */
        for (size_t i = 0; i < k; i++) made[i] = sw_proc_prepare(s->rt, &sp[i], err, sizeof err);
    }
    for (size_t i = 0; i < k; i++) {
        of[i]->standby = made[i];
        of[i]->standby_of = of[i]->entry;
    }
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
    v->sup->launches++;
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
    sup_arm(&v->timer, svc_start_timeout_fired, lc->start_timeout_ns);
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
    svc_timer_stop(v);
    svc_enter(v, v->sub == SW_SUB_STARTING ? SW_SUB_RUNNING : SW_SUB_RUNNING_KILLED, NULL, -1);
    svc_watchdog_arm(v);
}

void svc_fail_run(sw_svc *v, const char *reason)
{
    if (!v->pid || (v->sub != SW_SUB_STARTING && v->sub != SW_SUB_RUNNING)) return;
    svc_timer_stop(v); /* a start timeout: this failure comes first */
    free(v->reason);
    v->reason = strdup(reason);
    shift(v, v->sub == SW_SUB_STARTING ? SW_SUB_START_TIMED_OUT : SW_SUB_RUNNING_FAILED);
    svc_liveness_stop(v);
    sw_runtime_kill(v->sup->rt, v->pid);
}
