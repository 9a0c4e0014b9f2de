/* The supervisor's hands (see sup_internal.h): applies the deciders' plans, wants services,
 * starts whatever can start (the reconcile), stops in waves (a stop by hand, the holds of a
 * coordinated restart, a removal, the shutdown: its waves are sup_shutdown.c's), and settles
 * each entry point with one reconcile and one word to the change subscriber. Builds on
 * service.h for each service. */
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "sup_internal.h"
#include "units.h"

/* libuv times a timer from the loop's cached clock, which lags after a busy stretch: refresh
 * it so a timeout never fires early. */
void sup_arm(uv_timer_t *t, uv_timer_cb cb, int64_t ns)
{
    uv_update_time(t->loop);
    uv_timer_start(t, cb, (uint64_t)((ns + SW_NS_PER_MS - 1) / SW_NS_PER_MS), 0);
}

/* ---- plans ---- */

void sup_plan_add(sup_plan *p, sup_step step)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        sup_step *v = realloc(p->v, cap * sizeof *v);
        if (!v) abort();
        p->v = v;
        p->cap = cap;
    }
    if (step.reason && !(step.reason = strdup(step.reason))) abort();
    p->v[p->n++] = step;
}

static void plan_free(sup_plan *p)
{
    for (size_t i = 0; i < p->n; i++) free(p->v[i].reason);
    free(p->v);
    *p = (sup_plan){0};
}

/* A group's timers are entry points. */
static void own_restart_fired(uv_timer_t *t)
{
    sw_grp *g = t->data;
    g->waiting = false;
    sup_settle(g->sup);
}

static void set_restart_fired(uv_timer_t *t)
{
    sw_grp *g = t->data;
    g->set_pending = false;
    sup_settle(g->sup);
}

/* Arms (delay >= 0) or cancels (-1) the group's own restart or its strategy restart. */
static void grp_timer(sw_grp *g, bool own, int64_t delay)
{
    uv_timer_t *t = own ? &g->timer : &g->set_timer;
    uv_timer_stop(t);
    *(own ? &g->waiting : &g->set_pending) = delay >= 0;
    if (delay >= 0) sup_arm(t, own ? own_restart_fired : set_restart_fired, delay);
    g->sup->changed = true;
}

static void want(sw_supervisor *s, size_t i);

static void want_group(sw_supervisor *s, sw_grp *g)
{
    sup_plan p = {0};
    sup_group_want(g, &p);
    sup_apply(s, &p);
}

static void apply_step(sw_supervisor *s, const sup_step *st)
{
    switch (st->kind) {
    case SUP_HOLD:
        st->svc->held_by = st->grp;
        if (st->for_good) svc_mark_for_good(st->svc);
        break;
    case SUP_RELEASE: st->svc->held_by = NULL; break;
    case SUP_FRESH: svc_fresh(st->svc); break;
    case SUP_WANT:
        if (st->svc) want(s, st->svc->index);
        else want_group(s, st->grp);
        break;
    case SUP_END_HELD: svc_end_held(st->svc, st->st, st->reason); break;
    case SUP_OWN_RESTART: svc_schedule_restart(st->svc, st->st, st->reason, st->delay); break;
    case SUP_SET_RESTART: svc_set_restart(st->svc, st->st, st->reason, st->delay); break;
    case SUP_GRP_STATE: sup_grp_enter(st->grp, st->st, st->reason, st->attempt); break;
    case SUP_GRP_RESTART: grp_timer(st->grp, true, st->delay); break;
    case SUP_GRP_SET_RESTART: grp_timer(st->grp, false, st->delay); break;
    }
    s->changed = true;
}

void sup_apply(sw_supervisor *s, sup_plan *p)
{
    for (size_t i = 0; i < p->n; i++) apply_step(s, &p->v[i]);
    plan_free(p);
}

/* ---- wanting and starting ---- */

static void want(sw_supervisor *s, size_t i)
{
    sw_svc *v = s->svcs[i];
    if (v->wanted) return;
    v->wanted = true;
    s->changed = true;
    if (v->group) want_group(s, v->group); /* a child runs only with its whole group */
    const sw_graph *g = &s->reg->graph;
    for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) want(s, g->edges[k].to);
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
        if (sw_svc_state_of(d) == SW_SVC_RUNNING) continue;
        if (svc_blocked_for_good(d)) {
            *for_good = true;
            return d;
        }
        if (!pending) pending = d;
    }
    const sw_svc *sibling = sup_sibling_pending(s->svcs[i]);
    if (sibling && svc_blocked_for_good(sibling)) {
        *for_good = true;
        return sibling;
    }
    return pending ? pending : sibling;
}

/* v is blocked for good by dep: inactive with a reason naming it. true if that is news. */
static bool block(sw_svc *v, const sw_svc *dep)
{
    char reason[512];
    bool sibling = dep == sup_sibling_pending(v);
    snprintf(reason, sizeof reason, "%s %s %s", sibling ? "earlier sibling" : "dependency",
             dep->entry->id, sw_svc_state_name(sw_svc_state_of(dep)));
    if (v->reason && strcmp(v->reason, reason) == 0) return false;
    svc_block(v, reason);
    return true; /* its own dependents are blocked too */
}

/* Whether service i would start now: wanted, free, down and every dependency running. */
static bool startable(sw_supervisor *s, size_t i)
{
    sw_svc *v = s->svcs[i];
    bool for_good;
    return v->wanted && !v->held_by && svc_idle(v) && !pending_dependency(s, i, &for_good);
}

/* The processes of the next services that start in this pass (up to AHEAD from i) are made
 * first, on two threads, then launched as the pass reaches each: the workers take them in
 * bursts, each woken once for many (service.h svc_prepare_ahead). Returns where the
 * look-ahead stopped: each service is looked at once more per pass. */
enum { AHEAD = 64 };

static size_t prepare_ahead(sw_supervisor *s, size_t i)
{
    sw_svc *next[AHEAD];
    size_t n = 0;
    for (; i < s->n && n < AHEAD; i++)
        if (startable(s, i)) next[n++] = s->svcs[i];
    svc_prepare_ahead(next, n);
    return i;
}

/* Starts whatever can start; marks services whose dependency will not run by itself. */
static void start_what_can(sw_supervisor *s)
{
    bool changed = true;
    while (changed) {
        changed = false;
        size_t ahead = 0; /* the services before it have their processes made */
        for (size_t i = 0; i < s->n; i++) {
            sw_svc *v = s->svcs[i];
            if (!v->wanted || v->held_by || !svc_idle(v)) continue;
            bool for_good;
            const sw_svc *dep = pending_dependency(s, i, &for_good);
            if (!dep) {
                if (i >= ahead) ahead = prepare_ahead(s, i);
                svc_start(v);
                changed = true;
            } else if (for_good) {
                changed = block(v, dep) || changed;
            }
        }
    }
}

/* READY=1 once every wanted service runs or has ended for good (a service in backoff is not
 * ready: a crash loop at start keeps `systemctl start` waiting, as it should). */
static void maybe_ready(sw_supervisor *s)
{
    if (s->ready_sent || s->shutting_down) return;
    for (size_t i = 0; i < s->n; i++) {
        const sw_svc *v = s->svcs[i];
        sw_svc_state st = sw_svc_state_of(v);
        if (v->wanted && st != SW_SVC_RUNNING && !sw_svc_for_good(v) &&
            !(st == SW_SVC_INACTIVE && v->reason))
            return;
    }
    s->ready_sent = true;
    if (s->notify) s->notify(s->notify_arg, "READY=1");
}

static void settle_groups(sw_supervisor *s)
{
    sup_plan p = {0};
    sup_group_settle(s, &p);
    sup_apply(s, &p);
}

/* ---- stopping ---- */

enum { DEPS_UNKNOWN, DEPS_DOWN, DEPS_ACTIVE };

/* Whether a service in `stopping` that depends on i, directly or through services that are
 * already down (stopped, inactive: mid in db <- mid <- top), is still active: then i waits
 * (docs/supervision.md "Stopping and shutdown"). An active dependent outside `stopping` keeps
 * running and does not hold i back, as before. Memoized in seen per wave: each service is
 * walked once. */
static bool dependents_active(sw_supervisor *s, size_t i, const bool *stopping, unsigned char *seen)
{
    if (seen[i] != DEPS_UNKNOWN) return seen[i] == DEPS_ACTIVE;
    seen[i] = DEPS_DOWN; /* the graph has no cycles; this only guards against one */
    const sw_svc *v = s->svcs[i];
    for (size_t k = 0; k < v->n_dependents; k++) {
        size_t d = v->dependents[k];
        bool active = sw_svc_active(s->svcs[d]);
        if ((active && stopping[d]) || (!active && dependents_active(s, d, stopping, seen))) {
            seen[i] = DEPS_ACTIVE;
            return true;
        }
    }
    return false;
}

/* Stops every service in `stopping` whose dependents (transitively) and later siblings in it
 * are down; true while any of them is still active. */
static bool stop_wave(sw_supervisor *s, const bool *stopping)
{
    unsigned char *seen = calloc(s->n ? s->n : 1, 1);
    if (!seen) return true; /* out of memory: the next wave, or the shutdown timeout */
    bool any_active = false;
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (stopping[i] && (sw_svc_waiting(v) || v->sub == SW_SUB_AWAIT_STANDBY))
            svc_begin_stop(v); /* nothing runs: the restart to come is cancelled */
    }
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!stopping[i] || !sw_svc_active(v)) continue;
        any_active = true;
        if (!sup_later_sibling_active(v, stopping) && !dependents_active(s, i, stopping, seen))
            svc_begin_stop(v);
    }
    free(seen);
    return any_active;
}

/* In the set of a stop by hand (unwanted and for good) or of a coordinated restart (held). */
static bool in_stop_set(const sw_svc *v)
{
    return (!v->wanted && sw_svc_for_good(v)) || v->held_by;
}

/* A stop by hand or a restart in progress goes on with its next wave; then the holds whose set
 * is down are released. Nothing to do (and nothing allocated) when no service is in a set. */
static void continue_stops(sw_supervisor *s)
{
    size_t first = 0;
    while (first < s->n && !in_stop_set(s->svcs[first])) first++;
    if (first == s->n) return;
    bool *set = calloc(s->n, 1);
    if (!set) return;
    for (size_t i = first; i < s->n; i++) set[i] = in_stop_set(s->svcs[i]);
    stop_wave(s, set);
    free(set);
    sup_plan p = {0};
    sup_group_releases(s, &p);
    sup_apply(s, &p);
}

static void check_shutdown(sw_supervisor *s)
{
    bool any = sup_shutdown_wave(s); /* sup_shutdown.c: linear over the whole shutdown */
    settle_groups(s);
    if (any || s->n_retired || s->done) return;
    s->done = true;
    /* Before the runtime goes: what the preparer had comes back as messages, handled (its
     * processes discarded) now, while the runtime they count in still lives. */
    sw_preparer_stop(&s->preparer);
    sup_drain(s);
    uv_timer_stop(&s->shutdown_timer);
    uv_stop(s->loop);
}

/* Frees the services a reload removed once down; stops the highest start level still active. */
static void reap_retired(sw_supervisor *s)
{
    size_t kept = 0, top = 0;
    bool any_active = false;
    for (size_t i = 0; i < s->n_retired; i++) {
        sw_svc *v = s->retired[i];
        if (sw_svc_waiting(v) || v->sub == SW_SUB_AWAIT_STANDBY)
            svc_begin_stop(v); /* cancels the restart to come */
        if (!sw_svc_active(v)) {
            svc_free(v);
            continue;
        }
        if (!any_active || v->retired_level > top) top = v->retired_level;
        any_active = true;
        s->retired[kept++] = v;
    }
    s->n_retired = kept;
    for (size_t i = 0; i < s->n_retired; i++)
        if (s->retired[i]->retired_level == top) svc_begin_stop(s->retired[i]);
}

/* ---- the end of an entry point ---- */

/* Once per change: a subscriber that calls back into the supervisor gets a further call for
 * what that changed, never a nested one. */
static void tell_change(sw_supervisor *s)
{
    if (s->telling) return;
    s->telling = true;
    while (s->changed) {
        s->changed = false;
        if (s->on_change) s->on_change(s->on_change_arg);
    }
    s->telling = false;
}

void sup_settle(sw_supervisor *s)
{
    reap_retired(s);
    if (s->shutting_down) {
        check_shutdown(s);
    } else {
        continue_stops(s);
        start_what_can(s);
        settle_groups(s);
        maybe_ready(s);
    }
    tell_change(s);
}
