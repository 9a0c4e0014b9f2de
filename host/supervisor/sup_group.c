/* service.group (docs/supervision.md): the tree of groups, list order, and the decisions:
 * children start in list order and stop in reverse; a child's restart-worthy end counts in the
 * group's window and is handled by its strategy; more than `intensity` restarts within
 * `period` fail the group, whose parent (the root or the enclosing group) then applies the
 * group's own restart policy. It owns each group's window, attempts and tree; what happens to
 * services, group states and timers it returns as a plan (sup_internal.h) for sup_apply. */
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "service.h"
#include "sup_internal.h"
#include "units.h"

/* ---- building the tree ---- */

static void add_members(sw_grp *g, sw_grp *top)
{
    for (size_t k = 0; k < g->n_children; k++) {
        if (g->children[k].svc) top->members[top->n_members++] = g->children[k].svc;
        else add_members(g->children[k].grp, top);
    }
}

static size_t count_members(const sw_grp *g)
{
    size_t n = 0;
    for (size_t k = 0; k < g->n_children; k++)
        n += g->children[k].svc ? 1 : count_members(g->children[k].grp);
    return n;
}

static sw_grp *grp_new(sw_supervisor *s, const sw_entry *e)
{
    sw_grp *g = calloc(1, sizeof *g);
    if (!g) abort();
    g->entry = e;
    g->sup = s;
    g->state = SW_SVC_INACTIVE;
    g->children = calloc(e->as.group.children.n ? e->as.group.children.n : 1, sizeof *g->children);
    if (!g->children) abort();
    uv_timer_init(s->loop, &g->timer);
    uv_timer_init(s->loop, &g->set_timer);
    g->timer.data = g->set_timer.data = g;
    return g;
}

/* g's children, found by entry index among the services and groups. */
static void link_children(sw_grp *g, sw_svc **svc_of, sw_grp **grp_of)
{
    const sw_reflist *kids = &g->entry->as.group.children;
    for (size_t c = 0; c < kids->n; c++) {
        const sw_entry *t = kids->v[c].target;
        if (sw_entry_is_service(t)) {
            g->children[c].svc = svc_of[t->index];
            svc_of[t->index]->group = g;
            svc_of[t->index]->pos = c;
        } else {
            g->children[c].grp = grp_of[t->index];
            grp_of[t->index]->parent = g;
            grp_of[t->index]->pos = c;
        }
    }
    g->n_children = kids->n;
}

void sup_groups_build(sw_supervisor *s)
{
    const sw_registry *r = s->reg;
    sw_grp **grp_of = calloc(r->n_entries ? r->n_entries : 1, sizeof *grp_of);
    sw_svc **svc_of = calloc(r->n_entries ? r->n_entries : 1, sizeof *svc_of);
    if (!grp_of || !svc_of) abort();
    for (size_t i = 0; i < s->n; i++) svc_of[s->svcs[i]->entry->index] = s->svcs[i];
    s->n_grps = 0;
    for (size_t i = 0; i < r->n_entries; i++) s->n_grps += r->entries[i]->kind == SW_KIND_GROUP;
    s->grps = calloc(s->n_grps ? s->n_grps : 1, sizeof *s->grps);
    if (!s->grps) abort();
    size_t k = 0;
    for (size_t i = 0; i < r->n_entries; i++)
        if (r->entries[i]->kind == SW_KIND_GROUP)
            s->grps[k++] = grp_of[i] = grp_new(s, r->entries[i]);
    for (k = 0; k < s->n_grps; k++) link_children(s->grps[k], svc_of, grp_of);
    for (k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        g->members = calloc(count_members(g) + 1, sizeof *g->members);
        if (!g->members) abort();
        add_members(g, g);
    }
    free(grp_of);
    free(svc_of);
}

static void grp_closed(uv_handle_t *h)
{
    sw_grp *g = h->data;
    if (--g->open_timers) return;
    sw_window_free(&g->window);
    free(g->children);
    free(g->members);
    free(g);
}

void sup_groups_drop(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_grps; k++) { /* each is freed once its timers have closed */
        sw_grp *g = s->grps[k];
        g->open_timers = 2;
        uv_close((uv_handle_t *)&g->timer, grp_closed);
        uv_close((uv_handle_t *)&g->set_timer, grp_closed);
    }
    free(s->grps);
    s->grps = NULL;
    s->n_grps = 0;
}

/* ---- list order ---- */

static const sw_svc *not_started(const sw_child *c)
{
    if (c->svc) return svc_started(c->svc) ? NULL : c->svc;
    for (size_t i = 0; i < c->grp->n_members; i++)
        if (!svc_started(c->grp->members[i])) return c->grp->members[i];
    return NULL;
}

const sw_svc *sup_sibling_pending(const sw_svc *v)
{
    size_t pos = v->pos;
    for (const sw_grp *g = v->group; g; pos = g->pos, g = g->parent) {
        if (pos == 0) continue;
        const sw_svc *m = not_started(&g->children[pos - 1]);
        if (m) return m;
    }
    return NULL;
}

static bool active_in(const sw_svc *m, const bool *set)
{
    return set[m->index] && sw_svc_active(m);
}

static bool child_active_in(const sw_child *c, const bool *set)
{
    if (c->svc) return active_in(c->svc, set);
    for (size_t i = 0; i < c->grp->n_members; i++)
        if (active_in(c->grp->members[i], set)) return true;
    return false;
}

bool sup_later_sibling_active(const sw_svc *v, const bool *set)
{
    size_t pos = v->pos;
    for (const sw_grp *g = v->group; g; pos = g->pos, g = g->parent)
        for (size_t k = pos + 1; k < g->n_children; k++)
            if (child_active_in(&g->children[k], set)) return true;
    return false;
}

/* ---- states and wanting ---- */

void sup_grp_enter(sw_grp *g, sw_svc_state st, const char *reason, int64_t attempt)
{
    g->state = st;
    if (st == SW_SVC_RUNNING) g->run_start = uv_hrtime();
    sup_log_state(g->sup, g->entry->id, st, attempt, reason, -1);
}

static void grp_step(sup_plan *p, sw_grp *g, sw_svc_state st, const char *reason)
{
    sup_plan_add(p, (sup_step){.kind = SUP_GRP_STATE,
                               .grp = g,
                               .st = st,
                               .reason = (char *)reason,
                               .attempt = g->attempt + 1});
}

static void want_subtree(sw_grp *g, sup_plan *p)
{
    g->wanted = true;
    if (g->state == SW_SVC_INACTIVE) grp_step(p, g, SW_SVC_STARTING, NULL);
    for (size_t k = 0; k < g->n_children; k++)
        if (g->children[k].grp) want_subtree(g->children[k].grp, p);
}

void sup_group_want(sw_grp *g, sup_plan *p)
{
    while (g->parent) g = g->parent;
    if (g->wanted) return;
    want_subtree(g, p);
    for (size_t i = 0; i < g->n_members; i++)
        sup_plan_add(p, (sup_step){.kind = SUP_WANT, .svc = g->members[i]});
}

/* Shutdown: a group whose members are all down is stopped. */
static void settle_stopped(sw_grp *g, sup_plan *p)
{
    if (g->state == SW_SVC_STOPPED || g->state == SW_SVC_INACTIVE) return;
    for (size_t i = 0; i < g->n_members; i++)
        if (sw_svc_active(g->members[i])) return;
    grp_step(p, g, SW_SVC_STOPPED, "shutdown");
}

void sup_group_settle(sw_supervisor *s, sup_plan *p)
{
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (s->shutting_down) {
            settle_stopped(g, p);
            continue;
        }
        if (g->state != SW_SVC_STARTING || g->waiting || g->set_pending) continue;
        bool all = true;
        for (size_t i = 0; i < g->n_members && all; i++)
            all = svc_started(g->members[i]) || sw_svc_for_good(g->members[i]);
        if (all) grp_step(p, g, SW_SVC_RUNNING, NULL);
    }
}

/* ---- restarts ---- */

static int64_t next_delay(const sw_restart *r, int64_t *attempt)
{
    int64_t delay = sw_backoff_next(r, *attempt);
    (*attempt)++;
    return delay;
}

static const sw_restart *restart_of(const sw_child *c)
{
    return c->svc ? svc_restart(c->svc) : &c->grp->entry->as.group.lifecycle.restart;
}

/* The members of child c stop (if they run) and wait for holder h; temporary bystanders
 * (policy never) are not started again (OTP's temporary children), nor is anything of a group
 * that failed for good. */
static void hold_child(const sw_child *c, sw_grp *h, const sw_svc *failed, bool for_good,
                       sup_plan *p)
{
    sw_svc *const *m = c->svc ? &c->svc : c->grp->members;
    size_t n = c->svc ? 1 : c->grp->n_members;
    for (size_t i = 0; i < n; i++) {
        bool temporary =
            m[i] != failed && m[i]->entry->as.service.lifecycle.restart.policy == SW_RESTART_NEVER;
        sup_plan_add(
            p,
            (sup_step){.kind = SUP_HOLD, .svc = m[i], .grp = h, .for_good = for_good || temporary});
    }
}

static void child_failed(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st,
                         sup_plan *p);

/* g stops all its children and fails; its parent applies g's own restart policy. */
static void group_fail(sw_grp *g, const char *why, sup_plan *p)
{
    sup_plan_add(p, (sup_step){.kind = SUP_GRP_SET_RESTART, .grp = g, .delay = -1});
    sw_window_reset(&g->window); /* a restarted group starts with a fresh window */
    const sw_lifecycle *lc = &g->entry->as.group.lifecycle;
    if (g->run_start && (int64_t)(uv_hrtime() - g->run_start) >= lc->stable_threshold_ns)
        g->attempt = 0;
    g->run_start = 0;
    bool for_good = lc->restart.policy == SW_RESTART_NEVER ||
                    (lc->restart.max_attempts > 0 && g->attempt + 1 >= lc->restart.max_attempts);
    if (for_good) g->final = true;
    sw_child self = {.grp = g};
    hold_child(&self, g, NULL, for_good, p);
    grp_step(p, g, SW_SVC_FAILED, why);
    if (for_good) return;
    if (g->parent) child_failed(g->parent, &self, why, SW_SVC_FAILED, p);
    else
        sup_plan_add(p, (sup_step){.kind = SUP_GRP_RESTART,
                                   .grp = g,
                                   .delay = next_delay(&lc->restart, &g->attempt)});
}

static void window_exceeded(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st,
                            sup_plan *p)
{
    sw_svc *svc = c->svc;
    if (svc) {
        sup_plan_add(p, (sup_step){.kind = SUP_HOLD, .svc = svc, .grp = g});
        sup_plan_add(
            p, (sup_step){.kind = SUP_END_HELD, .svc = svc, .st = st, .reason = (char *)reason});
    }
    char why[256];
    snprintf(why, sizeof why, "more than %lld restarts in %.3gs (child %s: %s)",
             (long long)g->entry->as.group.intensity, (double)g->entry->as.group.period_ns / 1e9,
             svc ? svc->entry->id : c->grp->entry->id, reason);
    group_fail(g, why, p);
}

/* one_for_all and rest_for_one: the failed child and those the strategy takes with it are
 * held until all are down and the failed child's backoff has passed. */
static void restart_set(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st,
                        sup_plan *p)
{
    sw_svc *svc = c->svc;
    size_t from =
        g->entry->as.group.strategy == SW_ONE_FOR_ALL ? 0 : (svc ? svc->pos : c->grp->pos);
    for (size_t k = from; k < g->n_children; k++) hold_child(&g->children[k], g, svc, false, p);
    int64_t delay;
    if (svc) {
        delay = sw_backoff_next(restart_of(c), svc->attempt); /* counted by SUP_SET_RESTART */
        sup_plan_add(p, (sup_step){.kind = SUP_SET_RESTART,
                                   .svc = svc,
                                   .st = st,
                                   .reason = (char *)reason,
                                   .delay = delay});
    } else {
        delay = next_delay(restart_of(c), &c->grp->attempt);
    }
    sup_plan_add(p, (sup_step){.kind = SUP_GRP_SET_RESTART, .grp = g, .delay = delay});
}

static void child_failed(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st,
                         sup_plan *p)
{
    const sw_group *def = &g->entry->as.group;
    if (sw_window_add(&g->window, def->intensity, def->period_ns, (int64_t)uv_hrtime())) {
        window_exceeded(g, c, reason, st, p);
    } else if (def->strategy != SW_ONE_FOR_ONE) {
        restart_set(g, c, reason, st, p);
    } else if (c->svc) {
        int64_t delay = sw_backoff_next(restart_of(c), c->svc->attempt);
        sup_plan_add(p, (sup_step){.kind = SUP_OWN_RESTART,
                                   .svc = c->svc,
                                   .st = st,
                                   .reason = (char *)reason,
                                   .delay = delay});
    } else { /* the child group restarts on its own timer; its members are held by it */
        sup_plan_add(p, (sup_step){.kind = SUP_GRP_RESTART,
                                   .grp = c->grp,
                                   .delay = next_delay(restart_of(c), &c->grp->attempt)});
    }
}

void sup_group_child_ended(sw_svc *v, sw_svc_state st, const char *reason, sup_plan *p)
{
    sw_child c = {.svc = v};
    child_failed(v->group, &c, reason, st, p);
}

/* ---- holds ---- */

/* Which holders are still busy: one of their services is active or waits to restart, or
 * their own timers run, or they failed for good. */
static void mark_holders(sw_supervisor *s)
{
    s->by_hand.busy = s->by_hand.holds = false;
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        g->busy = g->waiting || g->set_pending || g->final;
        g->holds = false;
    }
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!v->held_by) continue;
        v->held_by->holds = true;
        if (sw_svc_active(v) || sw_svc_waiting(v)) v->held_by->busy = true;
    }
}

static bool released(const sw_svc *v) { return !v->held_by || !v->held_by->busy; }

void sup_group_releases(sw_supervisor *s, sup_plan *p)
{
    if (s->shutting_down) return;
    mark_holders(s);
    size_t before = p->n;
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (v->held_by && !v->held_by->busy)
            sup_plan_add(p, (sup_step){.kind = SUP_RELEASE, .svc = v});
    }
    if (p->n == before) return;
    for (size_t k = 0; k < s->n_grps;
         k++) { /* a failed group whose members are free again restarts */
        sw_grp *g = s->grps[k];
        bool free_again = g->state == SW_SVC_FAILED && !g->final && !g->waiting;
        for (size_t i = 0; i < g->n_members && free_again; i++)
            free_again = released(g->members[i]);
        if (free_again) grp_step(p, g, SW_SVC_STARTING, "restarting");
    }
}
