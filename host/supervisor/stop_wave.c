/* Stop timeouts queued by stop_timeout behind one timer each (see stop_wave.h). */
#include "stop_wave.h"

#include <stdlib.h>

#include "sup_internal.h"
#include "units.h"

struct sup_stop_queue {
    uv_timer_t timer; /* armed at (or before) the head's deadline while the queue is not empty */
    sw_supervisor *sup;
    int64_t ns;          /* the stop_timeout its services wait out */
    sw_svc *head, *tail; /* by deadline, which is arrival order */
};

static uint64_t ms_of(int64_t ns) { return (uint64_t)((ns + SW_NS_PER_MS - 1) / SW_NS_PER_MS); }

/* Entry point: the head's deadline, or a spurious one (its head was disarmed meanwhile: the
 * timer is re-armed lazily, here). Every service due is fired, then one settle. */
static void queue_due(uv_timer_t *t)
{
    sup_stop_queue *q = t->data;
    uint64_t now = uv_now(q->sup->loop);
    sw_svc *v;
    bool fired = false;
    while ((v = q->head) && v->stop.due <= now) {
        sup_stop_disarm(v);
        v->stop.fired(v);
        fired = true;
    }
    if (q->head) uv_timer_start(&q->timer, queue_due, q->head->stop.due - now, 0);
    if (fired) sup_settle(q->sup);
}

/* The queue of stop_timeout ns: the last used one first (most services share one value). */
static sup_stop_queue *queue_of(sw_supervisor *s, int64_t ns)
{
    if (s->stop_last && s->stop_last->ns == ns) return s->stop_last;
    for (size_t k = 0; k < s->n_stop_queues; k++)
        if (s->stop_queues[k]->ns == ns) return s->stop_last = s->stop_queues[k];
    sup_stop_queue **qs = realloc(s->stop_queues, (s->n_stop_queues + 1) * sizeof *qs);
    if (!qs) return NULL;
    s->stop_queues = qs;
    sup_stop_queue *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->sup = s;
    q->ns = ns;
    uv_timer_init(s->loop, &q->timer);
    q->timer.data = q;
    qs[s->n_stop_queues++] = q;
    return s->stop_last = q;
}

void sup_stop_arm(sw_svc *v, int64_t ns, sup_stop_fired fired)
{
    sup_stop_disarm(v); /* re-arming replaces, as a timer's start does */
    sup_stop_queue *q = queue_of(v->sup, ns);
    if (!q) {
        fired(v);
        return;
    }
    uint64_t ms = ms_of(ns);
    v->stop.due = uv_now(v->sup->loop) + ms;
    v->stop.fired = fired;
    v->stop.queue = q;
    v->stop.next = NULL;
    v->stop.prev = q->tail;
    if (q->tail) q->tail->stop.next = v;
    else q->head = v;
    q->tail = v;
    if (!uv_is_active((uv_handle_t *)&q->timer)) uv_timer_start(&q->timer, queue_due, ms, 0);
}

void sup_stop_disarm(sw_svc *v)
{
    sup_stop_queue *q = v->stop.queue;
    if (!q) return;
    if (v->stop.prev) v->stop.prev->stop.next = v->stop.next;
    else q->head = v->stop.next;
    if (v->stop.next) v->stop.next->stop.prev = v->stop.prev;
    else q->tail = v->stop.prev;
    v->stop.queue = NULL;
    v->stop.next = v->stop.prev = NULL;
    if (!q->head) uv_timer_stop(&q->timer);
}

static void queue_closed(uv_handle_t *h) { free(h->data); }

void sup_stop_close(sw_supervisor *s)
{
    for (size_t k = 0; k < s->n_stop_queues; k++)
        uv_close((uv_handle_t *)&s->stop_queues[k]->timer, queue_closed);
    free(s->stop_queues);
    s->stop_queues = NULL;
    s->n_stop_queues = 0;
    s->stop_last = NULL;
}
