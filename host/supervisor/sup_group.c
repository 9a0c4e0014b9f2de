/* service.group (DESIGN §4): children start in list order and stop in reverse; a child's
 * restart-worthy end counts in the group's window and is handled by its strategy; more than
 * `intensity` restarts within `period` fail the group, whose parent (the root or the
 * enclosing group) then applies the group's own restart policy. */
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
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

int sup_groups_build(sw_supervisor *s)
{
    const sw_registry *r = s->reg;
    sw_grp **by_entry = calloc(r->n_entries ? r->n_entries : 1, sizeof *by_entry);
    sw_svc **svc_of = calloc(r->n_entries ? r->n_entries : 1, sizeof *svc_of);
    if (!by_entry || !svc_of) abort();
    for (size_t i = 0; i < s->n; i++) svc_of[s->svcs[i]->entry->index] = s->svcs[i];
    s->n_grps = 0;
    for (size_t i = 0; i < r->n_entries; i++) s->n_grps += r->entries[i]->kind == SW_KIND_GROUP;
    s->grps = calloc(s->n_grps ? s->n_grps : 1, sizeof *s->grps);
    if (!s->grps) abort();
    size_t k = 0;
    for (size_t i = 0; i < r->n_entries; i++)
        if (r->entries[i]->kind == SW_KIND_GROUP) s->grps[k++] = by_entry[i] = grp_new(s, r->entries[i]);
    for (k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        const sw_reflist *kids = &g->entry->as.group.children;
        for (size_t c = 0; c < kids->n; c++) {
            const sw_entry *t = kids->v[c].target;
            if (t->kind == SW_KIND_SERVICE) {
                g->children[c].svc = svc_of[t->index];
                svc_of[t->index]->group = g;
                svc_of[t->index]->pos = c;
            } else {
                g->children[c].grp = by_entry[t->index];
                by_entry[t->index]->parent = g;
                by_entry[t->index]->pos = c;
            }
        }
        g->n_children = kids->n;
    }
    for (k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        g->members = calloc(count_members(g) + 1, sizeof *g->members);
        if (!g->members) abort();
        add_members(g, g);
    }
    free(by_entry);
    free(svc_of);
    return 0;
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

void sup_groups_close(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        g->open_timers = 2;
        uv_close((uv_handle_t *)&g->timer, grp_closed);
        uv_close((uv_handle_t *)&g->set_timer, grp_closed);
    }
}

void sup_groups_free(sw_supervisor *s)
{
    free(s->grps);
    s->grps = NULL;
    s->n_grps = 0;
}

/* ---- list order ---- */

/* Started enough for the next sibling: running, or ended for good after running (a
 * temporary child that has done its work). */
static bool started(const sw_svc *m)
{
    return m->state == SW_SVC_RUNNING || (m->final && m->run_start && m->state == SW_SVC_STOPPED);
}

static const sw_svc *not_started(const sw_child *c)
{
    if (c->svc) return started(c->svc) ? NULL : c->svc;
    for (size_t i = 0; i < c->grp->n_members; i++)
        if (!started(c->grp->members[i])) return c->grp->members[i];
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

static bool active_in(const sw_svc *m, const bool *set) { return set[m->index] && sw_svc_active(m); }

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

/* ---- wanting and states ---- */

static void grp_transition(sw_grp *g, sw_svc_state st, const char *reason)
{
    g->state = st;
    sup_log_state(g->sup, g->entry->id, st, g->attempt + 1, reason, -1);
}

static void want_subtree(sw_grp *g)
{
    g->wanted = true;
    if (g->state == SW_SVC_INACTIVE) grp_transition(g, SW_SVC_STARTING, NULL);
    for (size_t k = 0; k < g->n_children; k++)
        if (g->children[k].grp) want_subtree(g->children[k].grp);
}

void sup_want_group(sw_supervisor *s, sw_grp *g)
{
    while (g->parent) g = g->parent;
    if (g->wanted) return;
    want_subtree(g);
    for (size_t i = 0; i < g->n_members; i++) sup_want(s, g->members[i]->index);
}

/* Shutdown: a group whose members are all down is stopped. */
static void settle_stopped(sw_grp *g)
{
    if (g->state == SW_SVC_STOPPED || g->state == SW_SVC_INACTIVE) return;
    for (size_t i = 0; i < g->n_members; i++)
        if (sw_svc_active(g->members[i])) return;
    grp_transition(g, SW_SVC_STOPPED, "shutdown");
}

void sup_groups_settle(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (s->shutting_down) {
            settle_stopped(g);
            continue;
        }
        if (g->state != SW_SVC_STARTING || g->waiting || g->set_pending) continue;
        bool all = true;
        for (size_t i = 0; i < g->n_members && all; i++) all = started(g->members[i]) || g->members[i]->final;
        if (!all) continue;
        g->run_start = uv_hrtime();
        grp_transition(g, SW_SVC_RUNNING, NULL);
    }
}

/* ---- restarts ---- */

static bool window_exceeded(sw_grp *g, int64_t now)
{
    return sw_window_add(&g->window, g->entry->as.group.intensity, g->entry->as.group.period_ns, now);
}

static int64_t next_delay(const sw_restart *r, int64_t *attempt)
{
    int64_t delay = sw_backoff_delay(r, *attempt + 1, rand() / ((double)RAND_MAX + 1));
    (*attempt)++;
    return delay;
}

static const sw_restart *restart_of(const sw_child *c)
{
    return c->svc ? &c->svc->entry->as.service.lifecycle.restart : &c->grp->entry->as.group.lifecycle.restart;
}

/* The members of child c stop (if they run) and wait for holder h; temporary bystanders
 * (policy never) are not started again (OTP's temporary children). */
static void hold_child(const sw_child *c, sw_grp *h, const sw_svc *failed)
{
    sw_svc *const *m = c->svc ? &c->svc : c->grp->members;
    size_t n = c->svc ? 1 : c->grp->n_members;
    for (size_t i = 0; i < n; i++) {
        m[i]->held_by = h;
        if (m[i] != failed && m[i]->entry->as.service.lifecycle.restart.policy == SW_RESTART_NEVER) m[i]->final = true;
    }
}

static void own_restart_fired(uv_timer_t *t)
{
    sw_grp *g = t->data;
    g->waiting = false;
    sup_continue_stops(g->sup);
}

static void set_restart_fired(uv_timer_t *t)
{
    sw_grp *g = t->data;
    g->set_pending = false;
    sup_continue_stops(g->sup);
}

static void child_failed(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st);

/* g stops all its children and fails; its parent applies g's own restart policy. */
static void group_fail(sw_grp *g, const char *why)
{
    uv_timer_stop(&g->set_timer);
    g->set_pending = false;
    sw_window_reset(&g->window); /* a restarted group starts with a fresh window */
    sw_child self = {.grp = g};
    hold_child(&self, g, NULL);
    const sw_lifecycle *lc = &g->entry->as.group.lifecycle;
    if (g->run_start && (int64_t)(uv_hrtime() - g->run_start) >= lc->stable_threshold_ns) g->attempt = 0;
    g->run_start = 0;
    if (lc->restart.policy == SW_RESTART_NEVER ||
        (lc->restart.max_attempts > 0 && g->attempt + 1 >= lc->restart.max_attempts)) {
        g->final = true;
        for (size_t i = 0; i < g->n_members; i++) g->members[i]->final = true;
        grp_transition(g, SW_SVC_FAILED, why);
        return;
    }
    grp_transition(g, SW_SVC_FAILED, why);
    if (g->parent) {
        child_failed(g->parent, &self, why, SW_SVC_FAILED);
        return;
    }
    g->waiting = true; /* the root restarts it after its backoff */
    sup_arm(&g->timer, own_restart_fired, next_delay(&lc->restart, &g->attempt));
}

static void child_failed(sw_grp *g, const sw_child *c, const char *reason, sw_svc_state st)
{
    sw_svc *svc = c->svc;
    if (window_exceeded(g, (int64_t)uv_hrtime())) {
        if (svc) {
            svc->held_by = g;
            sup_transition(svc, st, reason, -1);
        }
        char why[256];
        snprintf(why, sizeof why, "more than %lld restarts in %.3gs (child %s: %s)", (long long)g->entry->as.group.intensity,
                 (double)g->entry->as.group.period_ns / 1e9, svc ? svc->entry->id : c->grp->entry->id, reason);
        group_fail(g, why);
        return;
    }
    int strategy = g->entry->as.group.strategy;
    if (strategy == SW_ONE_FOR_ONE) {
        if (svc) {
            sup_schedule_restart(svc, reason, st);
        } else { /* the child group restarts on its own timer; its members are held by it */
            c->grp->waiting = true;
            sup_arm(&c->grp->timer, own_restart_fired, next_delay(restart_of(c), &c->grp->attempt));
        }
        return;
    }
    size_t from = strategy == SW_ONE_FOR_ALL ? 0 : (svc ? svc->pos : c->grp->pos);
    for (size_t k = from; k < g->n_children; k++) hold_child(&g->children[k], g, svc);
    int64_t delay = next_delay(restart_of(c), svc ? &svc->attempt : &c->grp->attempt);
    if (svc) {
        svc->next_attempt_at = sup_wall_ns() + delay;
        sup_transition(svc, st, reason, delay);
    }
    uv_timer_stop(&g->set_timer);
    g->set_pending = true;
    sup_arm(&g->set_timer, set_restart_fired, delay);
}

void sup_group_child_ended(sw_svc *v, const char *reason, sw_svc_state st)
{
    sw_child c = {.svc = v};
    child_failed(v->group, &c, reason, st);
}

/* ---- holds ---- */

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
        if (sw_svc_active(v) || v->waiting) v->held_by->busy = true;
    }
}

void sup_release_holds(sw_supervisor *s)
{
    if (s->shutting_down) return;
    mark_holders(s);
    bool released = false;
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!v->held_by || v->held_by->busy) continue;
        v->held_by = NULL;
        released = true;
    }
    if (!released) return;
    for (size_t k = 0; k < s->n_grps; k++) { /* a failed group whose members are free again restarts */
        sw_grp *g = s->grps[k];
        bool free_again = g->state == SW_SVC_FAILED && !g->final && !g->waiting;
        for (size_t i = 0; i < g->n_members && free_again; i++) free_again = !g->members[i]->held_by;
        if (free_again) grp_transition(g, SW_SVC_STARTING, "restarting");
    }
    sup_reconcile(s);
}

void sup_groups_cancel(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        uv_timer_stop(&g->timer);
        uv_timer_stop(&g->set_timer);
        g->waiting = g->set_pending = false;
    }
}
