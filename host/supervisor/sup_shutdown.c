/* The shutdown's stop order, kept as counts so that the whole shutdown costs O(services +
 * dependencies) however it is spread over entry points (see sup_internal.h). The order is
 * the one of docs/supervision.md "Stopping and shutdown": a service stops once everything
 * that depends on it, transitively through services already down, and every later sibling
 * are down.
 *
 * A service "holds" the services it depends on while it is active, or while it is down but
 * one of its dependents still holds it (down services pass the hold on: db <- mid <- top with
 * mid down keeps db up until top is down). held[i] counts the dependents of i that hold it; a
 * service whose count is 0 no longer holds its own dependencies once it is down, and may stop
 * once its later siblings are down. Each service is released once and each dependency edge
 * counted down once. What changes a service's activity is a logged transition (svc_enter
 * tells sup_shutdown_touched); the next wave looks at those alone. */
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "sup_internal.h"

typedef struct sup_shutdown sup_shutdown;

struct sup_shutdown {
    size_t n;
    size_t *held;        /* per service: dependents that hold it */
    unsigned char *flag; /* per service: ACTIVE (as last seen), RELEASED, QUEUED */
    size_t n_active;     /* services seen active */
    size_t *released;    /* services released but not yet passed on to their dependencies */
    size_t n_released;
    sw_svc **touched; /* services with a transition since the last wave */
    size_t n_touched, cap_touched;
    size_t *ready; /* services that may stop once their later siblings are down */
    size_t n_ready, cap_ready;
    bool *all;   /* every service is in the shutdown's set (sup_later_sibling_active's set) */
    bool broken; /* out of memory on the way: the next wave starts over */
};

enum { ACTIVE = 1, RELEASED = 2, QUEUED = 4 };

static bool grow(void *vp, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    size_t c = *cap ? *cap * 2 : 64;
    void *v = realloc(*(void **)vp, c * size);
    if (!v) return false;
    *(void **)vp = v;
    *cap = c;
    return true;
}

void sup_shutdown_free(sw_supervisor *s)
{
    sup_shutdown *d = s->shutdown;
    if (!d) return;
    free(d->held);
    free(d->flag);
    free(d->released);
    free(d->touched);
    free(d->ready);
    free(d->all);
    free(d);
    s->shutdown = NULL;
}

void sup_shutdown_touched(sw_svc *v)
{
    sup_shutdown *d = v->sup->shutdown;
    if (!d || v->index >= d->n || d->broken) return; /* no shutdown order yet, or a removed one */
    if (!grow(&d->touched, &d->cap_touched, d->n_touched, sizeof *d->touched)) {
        d->broken = true;
        return;
    }
    d->touched[d->n_touched++] = v;
}

/* A service whose restart is pending has nothing to stop: its restart is cancelled at once
 * (as the first thing of each wave: it is then down for the order). */
static void cancel_pending(sw_svc *v)
{
    if (sw_svc_waiting(v) || v->sub == SW_SUB_AWAIT_STANDBY) svc_begin_stop(v);
}

static void queue_ready(sup_shutdown *d, size_t i)
{
    if (d->flag[i] & QUEUED) return;
    if (!grow(&d->ready, &d->cap_ready, d->n_ready, sizeof *d->ready)) {
        d->broken = true;
        return;
    }
    d->flag[i] |= QUEUED;
    d->ready[d->n_ready++] = i;
}

/* i holds nothing any more (down, and no dependent holds it): its dependencies are counted
 * down, each one whose count reaches 0 is released in turn (down) or may stop (active). */
static void release(sw_supervisor *s, sup_shutdown *d, size_t i)
{
    const sw_graph *g = &s->reg->graph;
    d->flag[i] |= RELEASED;
    d->released[d->n_released++] = i;
    while (d->n_released) {
        size_t r = d->released[--d->n_released];
        for (size_t k = g->deps[r]; k < g->deps[r + 1]; k++) {
            size_t j = g->edges[k].to;
            if (--d->held[j] > 0) continue;
            if (d->flag[j] & ACTIVE) {
                queue_ready(d, j);
            } else if (!(d->flag[j] & RELEASED)) {
                d->flag[j] |= RELEASED;
                d->released[d->n_released++] = j; /* each service once: n slots suffice */
            }
        }
    }
}

/* A service seen active is down now: it no longer holds its dependencies (unless a dependent
 * still holds it), and the earlier siblings in its groups may stop. */
static void went_down(sw_supervisor *s, sup_shutdown *d, const sw_svc *v)
{
    size_t i = v->index;
    d->flag[i] &= (unsigned char)~ACTIVE;
    d->n_active--;
    if (d->held[i] == 0) release(s, d, i);
    if (!v->group) return;
    const sw_grp *top = v->group;
    while (top->parent) top = top->parent;
    for (size_t k = 0; k < top->n_members; k++) {
        size_t m = top->members[k]->index;
        if ((d->flag[m] & ACTIVE) && d->held[m] == 0) queue_ready(d, m);
    }
}

/* Counts from scratch: at the first wave, and after anything the counts did not foresee (a
 * service active again, memory that ran out). */
static bool build(sw_supervisor *s)
{
    sup_shutdown_free(s);
    sup_shutdown *d = calloc(1, sizeof *d);
    size_t n = s->n ? s->n : 1;
    if (!d) return false;
    s->shutdown = d;
    d->n = s->n;
    d->held = calloc(n, sizeof *d->held);
    d->flag = calloc(n, 1);
    d->released = malloc(n * sizeof *d->released);
    d->all = malloc(n);
    if (!d->held || !d->flag || !d->released || !d->all) {
        sup_shutdown_free(s);
        return false;
    }
    memset(d->all, 1, n);
    const sw_graph *g = &s->reg->graph;
    for (size_t i = 0; i < s->n; i++) cancel_pending(s->svcs[i]);
    d->n_touched = 0; /* what that changed is counted below */
    for (size_t k = 0; k < g->deps[s->n]; k++) d->held[g->edges[k].to]++;
    for (size_t i = 0; i < s->n; i++)
        if (sw_svc_active(s->svcs[i])) {
            d->flag[i] |= ACTIVE;
            d->n_active++;
        }
    for (size_t i = 0; i < s->n; i++) {
        if (d->held[i] == 0 && !(d->flag[i] & (ACTIVE | RELEASED))) release(s, d, i);
    }
    for (size_t i = 0; i < s->n; i++)
        if ((d->flag[i] & ACTIVE) && d->held[i] == 0) queue_ready(d, i);
    return !d->broken;
}

/* Looks at the services touched since the last wave; false when the counts must be rebuilt. */
static bool take_touched(sw_supervisor *s, sup_shutdown *d)
{
    for (size_t k = 0; k < d->n_touched; k++) cancel_pending(d->touched[k]);
    for (size_t k = 0; k < d->n_touched && !d->broken; k++) {
        const sw_svc *v = d->touched[k];
        bool was = d->flag[v->index] & ACTIVE;
        bool is = sw_svc_active(v);
        if (is && !was) return false; /* active again: not foreseen */
        if (was && !is) went_down(s, d, v);
    }
    d->n_touched = 0;
    return !d->broken;
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The first wave queues every service in index order (build), and most later ones queue a few:
 * a sort is needed only when they came out of order. */
static bool sorted(const size_t *a, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (a[k - 1] > a[k]) return false;
    return true;
}

/* Stops the services whose later siblings are down, in graph order as the full scan did; one
 * whose later siblings still run waits for their end (went_down queues it again). */
static void stop_ready(sw_supervisor *s, sup_shutdown *d)
{
    if (!sorted(d->ready, d->n_ready)) qsort(d->ready, d->n_ready, sizeof *d->ready, by_index);
    size_t n = d->n_ready;
    d->n_ready = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = d->ready[k];
        d->flag[i] &= (unsigned char)~QUEUED;
        if (!(d->flag[i] & ACTIVE)) continue;
        if (!sup_later_sibling_active(s->svcs[i], d->all)) svc_begin_stop(s->svcs[i]);
    }
}

bool sup_shutdown_wave(sw_supervisor *s)
{
    sup_shutdown *d = s->shutdown;
    if (!d || d->broken || !take_touched(s, d)) {
        if (!build(s)) return true; /* out of memory: the next wave, or the shutdown timeout */
        d = s->shutdown;
    }
    stop_ready(s, d);
    /* what stop_ready started is seen by the next wave (a stop makes nothing down at once:
     * cancel_pending did that for pending restarts) */
    return d->n_active > 0;
}
