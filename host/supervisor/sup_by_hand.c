/* The supervisor's by-hand operations (entry points: control requests; docs/supervision.md
 * "Start, stop and restart by hand"): start, stop and restart one service with what it needs
 * or what needs it, and the lookups they and the control socket use. Each ends with
 * sup_settle (sup_apply.c). */
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "sup_internal.h"
#include "supervisor.h"

static sw_svc *find(sw_supervisor *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->svcs[i]->entry->id, id) == 0) return s->svcs[i];
    return NULL;
}

sw_svc *sw_supervisor_find(sw_supervisor *s, const char *id) { return find(s, id); }

size_t sw_supervisor_group_members(sw_supervisor *s, const char *id, bool *set)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        for (const sw_grp *g = s->svcs[i]->group; g; g = g->parent)
            if (g->entry && strcmp(g->entry->id, id) == 0) {
                set[i] = true;
                n++;
                break;
            }
    return n;
}

/* A start by hand: i and everything it needs, transitively, are wanted again and lose an
 * earlier stop by hand or failure for good (unless they run or wait to restart). */
static void want_by_hand(sw_supervisor *s, size_t i, bool *seen)
{
    if (seen[i]) return;
    seen[i] = true;
    sw_svc *v = s->svcs[i];
    v->wanted = true;
    s->changed = true;
    if (v->group) {
        sup_plan p = {0};
        sup_plan_add(&p, (sup_step){.kind = SUP_WANT, .grp = v->group});
        sup_apply(s, &p);
    }
    if (!v->pid && !sw_svc_waiting(v)) svc_fresh(v);
    const sw_graph *g = &s->reg->graph;
    for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) want_by_hand(s, g->edges[k].to, seen);
}

static bool *new_set(sw_supervisor *s) { return calloc(s->n ? s->n : 1, 1); }

int sw_supervisor_start_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    if (sw_svc_waiting(v) || v->pid)
        return 0; /* already running or about to: never a second instance */
    bool *seen = new_set(s);
    if (!seen) return -1;
    want_by_hand(s, v->index, seen);
    free(seen);
    sup_settle(s);
    return 0;
}

static void mark_dependents(sw_supervisor *s, size_t i, bool *set)
{
    if (set[i]) return;
    set[i] = true;
    for (size_t k = 0; k < s->svcs[i]->n_dependents; k++)
        mark_dependents(s, s->svcs[i]->dependents[k], set);
}

int sw_supervisor_stop_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    bool *set = new_set(s);
    if (!set) return -1;
    mark_dependents(s, v->index, set);
    for (size_t i = 0; i < s->n; i++) {
        if (!set[i]) continue;
        svc_mark_for_good(s->svcs[i]); /* an explicit stop is terminal: they stay stopped */
        s->svcs[i]->wanted = false;
    }
    free(set);
    sup_settle(s); /* its waves stop them, dependents first */
    return 0;
}

/* A restart by hand: the service and its dependents stop (dependents first) and are held
 * until all of them are down; then they start again in dependency order. */
int sw_supervisor_restart_one(sw_supervisor *s, const char *id)
{
    sw_svc *v = find(s, id);
    if (!v) return -1;
    if (s->shutting_down) return 0;
    bool *set = new_set(s), *seen = new_set(s);
    if (!set || !seen) {
        free(set);
        free(seen);
        return -1;
    }
    mark_dependents(s, v->index, set);
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *d = s->svcs[i];
        if (!set[i] || !(d == v || d->wanted)) continue;
        d->held_by = &s->by_hand;
        if (!d->pid && !sw_svc_waiting(d)) svc_fresh(d);
    }
    want_by_hand(s, v->index, seen);
    free(set);
    free(seen);
    sup_settle(s);
    return 0;
}
