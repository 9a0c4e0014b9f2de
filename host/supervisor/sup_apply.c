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
    if (p->n) s->scan_all = true; /* holds, wants and groups: more than the touched list says */
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

/* ---- what the reconcile looks at ---- */

void sup_touch(sw_svc *v)
{
    sw_supervisor *s = v->sup;
    if (!s->local || s->scan_all || v->touched || v->index >= s->n) return;
    if (s->n_touched == s->cap_touched) {
        size_t cap = s->cap_touched ? s->cap_touched * 2 : 16;
        sw_svc **t = realloc(s->touched, cap * sizeof *t);
        if (!t) {
            s->scan_all = true; /* out of memory: look at everything */
            return;
        }
        s->touched = t;
        s->cap_touched = cap;
    }
    /* earlier and later siblings wait for each other (sup_sibling_pending): a grouped service
     * changes more than itself and its dependents */
    if (v->group) {
        s->scan_all = true;
        return;
    }
    v->touched = true;
    s->touched[s->n_touched++] = v;
}

static void forget_touched(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_touched; k++) s->touched[k]->touched = false;
    s->n_touched = 0;
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The services touched since the last look and their dependents (those whose start may have
 * changed), in graph order, once each; the list is emptied. NULL when out of memory. */
static size_t *take_touched(sw_supervisor *s, size_t *n)
{
    size_t total = 0;
    for (size_t k = 0; k < s->n_touched; k++) total += 1 + s->touched[k]->n_dependents;
    size_t *idx = malloc((total ? total : 1) * sizeof *idx);
    if (!idx) return NULL;
    size_t m = 0;
    for (size_t k = 0; k < s->n_touched; k++) {
        const sw_svc *v = s->touched[k];
        idx[m++] = v->index;
        for (size_t d = 0; d < v->n_dependents; d++) idx[m++] = v->dependents[d];
    }
    forget_touched(s);
    qsort(idx, m, sizeof *idx, by_index);
    size_t u = 0;
    for (size_t k = 0; k < m; k++)
        if (u == 0 || idx[u - 1] != idx[k]) idx[u++] = idx[k];
    *n = u;
    return idx;
}

/* ---- starting ---- */

/* The services one pass looks at: all of them in graph order (idx NULL), or those of idx. */
typedef struct pass {
    const size_t *idx;
    size_t n;
} pass;

static size_t at(const pass *p, size_t k) { return p->idx ? p->idx[k] : k; }

/* The processes of the next services that start in this pass (up to AHEAD from its k-th) are
 * made first, on two threads, then launched as the pass reaches each: the workers take them
 * in bursts, each woken once for many (service.h svc_prepare_ahead). Returns where the
 * look-ahead stopped: each service is looked at once more per pass. */
enum { AHEAD = 64 };

static size_t prepare_ahead(sw_supervisor *s, const pass *p, size_t k)
{
    sw_svc *next[AHEAD];
    size_t n = 0;
    for (; k < p->n && n < AHEAD; k++)
        if (startable(s, at(p, k))) next[n++] = s->svcs[at(p, k)];
    svc_prepare_ahead(next, n);
    return k;
}

/* Starts each service of the pass that can start; marks those whose dependency will not run
 * by itself. true if any changed. */
static bool start_pass(sw_supervisor *s, const pass *p)
{
    bool changed = false;
    size_t ahead = 0; /* the services before it have their processes made */
    for (size_t k = 0; k < p->n; k++) {
        size_t i = at(p, k);
        sw_svc *v = s->svcs[i];
        if (!v->wanted || v->held_by || !svc_idle(v)) continue;
        bool for_good;
        const sw_svc *dep = pending_dependency(s, i, &for_good);
        if (!dep) {
            if (k >= ahead) ahead = prepare_ahead(s, p, k);
            svc_start(v);
            changed = true;
        } else if (for_good) {
            changed = block(v, dep) || changed;
        }
    }
    return changed;
}

/* Starts whatever can start, until nothing more can. In a batch of worker messages it looks
 * at the services they changed and at their dependents, then at what that changed, and so
 * on: a restart in a host of 10,000 services costs what it costs alone. Elsewhere, or when
 * the changes were more than the list says, it scans every service. */
static void start_what_can(sw_supervisor *s)
{
    while (s->local && !s->scan_all && s->n_touched) {
        size_t n;
        size_t *idx = take_touched(s, &n);
        if (!idx) {
            s->scan_all = true;
            break;
        }
        start_pass(s, &(pass){.idx = idx, .n = n});
        free(idx);
    }
    if (s->scan_all || !s->local) {
        forget_touched(s);
        while (start_pass(s, &(pass){.n = s->n})) {
        }
        s->scan_all = false;
    }
    forget_touched(s);
}

/* READY=1 once every wanted service runs or has ended for good (a service in backoff is not
 * ready: a crash loop at start keeps `systemctl start` waiting, as it should). */
static bool holds_ready(const sw_svc *v)
{
    sw_svc_state st = sw_svc_state_of(v);
    return v->wanted && st != SW_SVC_RUNNING && !sw_svc_for_good(v) &&
           !(st == SW_SVC_INACTIVE && v->reason);
}

/* The service that held READY back last time is looked at first, then those after it, then
 * those before: while services come up in graph order, each look is short. */
static void maybe_ready(sw_supervisor *s)
{
    if (s->ready_sent || s->shutting_down) return;
    size_t from = s->ready_blocker < s->n ? s->ready_blocker : 0;
    for (size_t k = 0; k < s->n; k++) {
        size_t i = (from + k) % s->n;
        if (holds_ready(s->svcs[i])) {
            s->ready_blocker = i;
            return;
        }
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

static bool touched_in_stop_set(const sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_touched; k++)
        if (in_stop_set(s->touched[k])) return true;
    return false;
}

/* A stop by hand or a restart in progress goes on with its next wave; then the holds whose set
 * is down are released. Nothing to do (and nothing allocated) when no service is in a set. In
 * a batch of worker messages, nothing to look at either when the last look left nothing to
 * stop or release and no service they changed is in a set (a service stopped by hand stays in
 * its set, down, for good: it must not cost every later reconcile a scan). */
static void continue_stops(sw_supervisor *s)
{
    if (s->local && !s->scan_all && !s->stop_sets && !touched_in_stop_set(s)) return;
    size_t first = 0;
    while (first < s->n && !in_stop_set(s->svcs[first])) first++;
    s->stop_sets = first < s->n;
    if (first == s->n) return;
    bool *set = calloc(s->n, 1);
    if (!set) return;
    bool held = false;
    for (size_t i = first; i < s->n; i++) {
        set[i] = in_stop_set(s->svcs[i]);
        held = held || s->svcs[i]->held_by;
    }
    s->stop_sets = stop_wave(s, set) || held; /* what is left to stop or release */
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
    s->small_batch = false; /* (set by the drain; nothing is launched any more) */
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
    bool local = s->local;
    s->local = false; /* what the subscriber calls back is an entry point of its own */
    while (s->changed) {
        s->changed = false;
        if (s->on_change) s->on_change(s->on_change_arg);
    }
    s->local = local;
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
