/* Worker loop: run queued processes one slice at a time, poll the libuv loop for due timers
 * every few slices, steal when idle; with nothing at all, spin briefly then park in uv_run
 * (worker_park.c: when, for how long, and how senders wake it). */
#include "worker.h"

#include <stdlib.h>
#include <time.h>

#include "exec.h"
#include "http_client.h"
#include "proc.h"
#include "vm.h"

#define POLL_NS (1000 * 1000) /* a busy worker looks at its loop's timers at least this often */
#define POLL_EVERY_RUNS \
    16 /* ... and reads the clock to know that only every so many runs,
                                * or when the watchdog has ticked since */

static _Thread_local sw_worker *current;

sw_worker *sw_worker_current(void) { return current; }


sw_worker *sw_workers_pick(sw_workers *ws)
{
    if (current && current->all == ws) return current;
    return &ws->w[atomic_fetch_add(&ws->next, 1) % (unsigned)ws->n];
}

#define STEAL_LOOK 8 /* a thief looks at this many queued processes at most for one unpinned */

/* What a thief may take from w's queue (lock held): never a pinned process (it owns sockets
 * on w's loop, sw_proc.pins, which only w's thread may touch); else the one after the head (the
 * owner keeps the one it is about to run), or the head if it is alone. A bounded look, so a
 * steal costs the same however long the queue (10,000 CANCELs at a shutdown): pinned ones
 * bunched at the front only delay it. Sets *prev to the pick's predecessor. */
static sw_proc *steal_pick(sw_worker *w, sw_proc **prev)
{
    sw_proc *p = w->head;
    *prev = NULL;
    if (p && p->next_run) *prev = p, p = p->next_run;
    for (int k = 0; p && k < STEAL_LOOK; k++, *prev = p, p = p->next_run)
        if (!atomic_load_explicit(&p->pins, memory_order_relaxed)) return p;
    if (w->head && !atomic_load_explicit(&w->head->pins, memory_order_relaxed)) {
        *prev = NULL; /* only pinned ones after it */
        return w->head;
    }
    return NULL;
}

static sw_proc *pop(sw_worker *w, bool steal)
{
    pthread_mutex_lock(&w->lock);
    sw_proc *prev = NULL, *p = steal ? steal_pick(w, &prev) : w->head;
    if (p) {
        if (prev) prev->next_run = p->next_run;
        else w->head = p->next_run;
        if (w->tail == p) w->tail = prev;
        p->next_run = NULL;
        atomic_fetch_sub_explicit(&w->queued, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&w->lock);
    return p;
}

/* Takes a process from a worker of self's pool that has at least `min` queued. */
static sw_proc *steal(sw_worker *self, size_t min)
{
    sw_workers *ws = self->all;
    for (int k = 1; k < ws->n; k++) {
        sw_worker *v = &ws->w[(self->index + k) % ws->n];
        if (atomic_load_explicit(&v->queued, memory_order_relaxed) < min)
            continue; /* racy peek; a miss only delays the steal */
        sw_proc *p = pop(v, true);
        if (p) {
            p->worker = self;
            return p;
        }
    }
    return NULL;
}

/* Wakes w if it is parked; returns whether this call did. On w's own thread, w is awake unless
 * this runs in a callback of its park's uv_run(ONCE): that is stopped, or a timer due on
 * entry would run before a poll that blocks. */
static bool wake(sw_worker *w)
{
    if (w != current) return sw_park_wake(&w->park);
    if (w->park.in_loop) uv_stop(&w->loop);
    return false;
}

/* busy has more than it can run right now: wake a parked worker of its pool, which steals.
 * Spinning ones need no wake-up: they peek at busy's queue. */
static void wake_one_sleeper(sw_worker *busy)
{
    sw_workers *ws = busy->all;
    for (int k = 1; k < ws->n; k++)
        if (wake(&ws->w[(busy->index + k) % ws->n])) return;
}

void sw_worker_enqueue(sw_worker *w, sw_proc *p)
{
    sw_proc_retain(p);
    pthread_mutex_lock(&w->lock);
    if (w->tail) w->tail->next_run = p;
    else w->head = p;
    w->tail = p;
    size_t queued = atomic_fetch_add_explicit(&w->queued, 1, memory_order_relaxed) + 1;
    pthread_mutex_unlock(&w->lock);
    if (!wake(w) && queued > 1) wake_one_sleeper(w);
}

void sw_worker_call_on(sw_worker *w, sw_worker_call *call)
{
    sw_worker_call *head = atomic_load_explicit(&w->calls, memory_order_relaxed);
    do call->next = head;
    while (!atomic_compare_exchange_weak_explicit(&w->calls, &head, call, memory_order_release,
                                                  memory_order_relaxed));
    wake(w);
}

/* Runs the calls queued for w, oldest first. Thread: w's (or the stopping one's, once w's
 * thread has ended). */
static void run_calls(sw_worker *w)
{
    sw_worker_call *c = atomic_exchange_explicit(&w->calls, NULL, memory_order_acquire),
                   *fifo = NULL;
    while (c) { /* pushed newest first */
        sw_worker_call *next = c->next;
        c->next = fifo;
        fifo = c;
        c = next;
    }
    while (fifo) {
        sw_worker_call *next = fifo->next;
        fifo->fn(fifo);
        fifo = next;
    }
}

/* Whether a busy worker should look at its loop's timers now. The clock is read only every
 * POLL_EVERY_RUNS runs or when the watchdog has ticked (every 1 ms while anything runs). */
static bool poll_due(sw_worker *w, unsigned *runs, uint64_t *seen_tick, uint64_t *last_poll)
{
    uint64_t tick = atomic_load_explicit(&w->ticks, memory_order_relaxed);
    if (++*runs < POLL_EVERY_RUNS && tick == *seen_tick) return false;
    *runs = 0;
    *seen_tick = tick;
    uint64_t now = uv_hrtime();
    if (now - *last_poll < POLL_NS) return false;
    *last_poll = now;
    return true;
}

/* What makes a parked worker get up: its queue, its calls, the pool stopping. Relaxed loads:
 * the park's fence orders them (worker_park.c). */
static bool has_work(void *arg)
{
    sw_worker *w = arg;
    return atomic_load_explicit(&w->queued, memory_order_relaxed) ||
           atomic_load_explicit(&w->calls, memory_order_relaxed) ||
           atomic_load_explicit(&w->all->stopping, memory_order_relaxed);
}

#define STEAL_EVERY_PEEKS 32 /* a spinner looks at other queues about every 1 us */

/* The spin's check: its own work at every pause; others' queues less often, and only a
 * backlog (two or more, what makes a busy worker wake a parked one): a process queued alone
 * is about to run where it is, and stealing it would split it from the processes it talks to,
 * making each of their messages a hop across threads. */
static bool found_work(void *arg)
{
    sw_worker *w = arg;
    if (has_work(w)) return true;
    if (w->all->n < 2 || ++w->peeks % STEAL_EVERY_PEEKS) return false;
    w->stolen = steal(w, 2);
    return w->stolen != NULL;
}

static sw_proc *next_proc(sw_worker *w)
{
    sw_proc *p = w->stolen;
    w->stolen = NULL;
    if (!p) p = pop(w, false);
    if (!p && w->all->n > 1) p = steal(w, 1);
    return p;
}

static void worker_main(void *arg)
{
    sw_worker *w = arg;
    current = w;
    sw_park_awake_begin();
    uint64_t last_poll = uv_hrtime(), seen_tick = 0;
    unsigned runs = 0;
    while (!atomic_load_explicit(&w->all->stopping, memory_order_relaxed)) {
        bool ran = atomic_load_explicit(&w->calls, memory_order_relaxed) != NULL;
        if (ran) run_calls(w);
        sw_proc *p = next_proc(w);
        if (p) {
            sw_proc_run(p);
            sw_proc_release(p);
            ran = true;
        }
        if (ran) { /* work that keeps coming, even caught by spins, still lets the loop run */
            if (poll_due(w, &runs, &seen_tick, &last_poll)) uv_run(&w->loop, UV_RUN_NOWAIT);
            continue;
        }
        if (sw_park_spin(&w->park, found_work, w)) continue;
        sw_park_sleep(&w->park, &w->loop, has_work, w);
        last_poll = uv_hrtime();
    }
    sw_park_awake_end();
    current = NULL;
}

static void free_handle(uv_handle_t *h) { free(h); }

void sw_worker_slice_begin(sw_worker *w, sw_vm *vm)
{
    atomic_fetch_add_explicit(&w->slice_seq, 1, memory_order_relaxed);
    atomic_store_explicit(&w->slice_vm, vm, memory_order_release);
}

void sw_worker_slice_end(sw_worker *w)
{
    atomic_store_explicit(&w->slice_vm, NULL, memory_order_release);
}

/* Every worker, not only w: a process moves between workers (steals), and the watchdog may
 * still be in a check of the worker that ran an earlier slice of it, holding its vm. */
void sw_worker_slice_retire(sw_worker *w)
{
    sw_workers *ws = w->all;
    for (int i = 0; i < ws->n; i++) {
        pthread_mutex_lock(&ws->w[i].slice_lock);
        pthread_mutex_unlock(&ws->w[i].slice_lock);
    }
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* One worker at one check: interrupts its slice once it has run long enough, timed from the
 * check that first saw it (the slice began at most one period before), and charges the time
 * since the previous check (elapsed) to the process it finds running: CPU time by sampling, as
 * a kernel's tick accounting does, so a slice costs no clock read (docs/supervision.md
 * "Resources"). Returns whether the worker ran Lua since the last check (a slice running now,
 * or others begun meanwhile). */
static bool check_worker(sw_workers *ws, sw_worker *w, uint64_t now, uint64_t period,
                         uint64_t elapsed)
{
    atomic_fetch_add_explicit(&w->ticks, 1, memory_order_relaxed);
    pthread_mutex_lock(&w->slice_lock);
    sw_vm *vm = atomic_load_explicit(&w->slice_vm, memory_order_acquire);
    if (vm) sw_proc_charge(vm, elapsed);
    uint64_t seq = atomic_load_explicit(&w->slice_seq, memory_order_relaxed);
    bool busy = vm || seq != w->seen_seq;
    if (seq != w->seen_seq) {
        w->seen_seq = seq;
        w->seen_at = now;
    } else if (vm && ws->slice_ns != SW_SLICE_NEVER &&
               now - w->seen_at + period / 2 >= ws->slice_ns) {
        sw_vm_interrupt(vm);
    }
    pthread_mutex_unlock(&w->slice_lock);
    return busy;
}

/* Preemption by time: every half slice, interrupt the workers whose current slice is over.
 * When no Lua has run for a while it naps longer, so an idle host costs nothing noticeable. */
static void watchdog_main(void *arg)
{
    sw_workers *ws = arg;
    const uint64_t period = SW_SLICE_NS / 2;
    int idle_checks = 0;
    uint64_t last = uv_hrtime();
    while (!atomic_load(&ws->stopping)) {
        sleep_ns(idle_checks > 100 ? 10 * SW_SLICE_NS : period); /* the check period stays fixed */
        uint64_t now = uv_hrtime();
        bool busy = false;
        for (int i = 0; i < ws->n; i++)
            busy |= check_worker(ws, &ws->w[i], now, period, now - last);
        last = now;
        idle_checks = busy ? 0 : idle_checks + 1;
    }
}

/* At shutdown, after the park's handle (part of the worker): every timer is a process timer,
 * allocated with its handle first, and freed with it. */
static void close_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, h->type == UV_TIMER ? free_handle : NULL);
}

int sw_workers_start(sw_workers *ws, int n, uint64_t slice_ns)
{
    ws->n = n;
    ws->slice_ns = slice_ns;
    ws->w = calloc((size_t)n, sizeof *ws->w);
    if (!ws->w) return UV_ENOMEM;
    atomic_store(&ws->stopping, false);
    atomic_store(&ws->next, 0);
    for (int i = 0; i < n; i++) {
        sw_worker *w = &ws->w[i];
        w->index = i;
        w->all = ws;
        pthread_mutex_init(&w->lock, NULL);
        pthread_mutex_init(&w->slice_lock, NULL);
        uv_loop_init(&w->loop);
        atomic_init(&w->queued, 0);
        atomic_init(&w->calls, NULL);
        if (sw_park_init(&w->park, &w->loop) != 0) return UV_EMFILE;
    }
    for (int i = 0; i < n; i++) {
        int rc = uv_thread_create(&ws->w[i].thread, worker_main, &ws->w[i]);
        if (rc) return rc;
    }
    return uv_thread_create(&ws->watchdog, watchdog_main, ws);
}

void sw_workers_stop(sw_workers *ws)
{
    atomic_store(&ws->stopping, true);
    for (int i = 0; i < ws->n; i++) sw_park_wake(&ws->w[i].park);
    for (int i = 0; i < ws->n; i++) uv_thread_join(&ws->w[i].thread);
    uv_thread_join(&ws->watchdog);
    for (int i = 0; i < ws->n; i++) {
        sw_worker *w = &ws->w[i];
        run_calls(w); /* still pending (a call may free memory) */
        if (w->stolen) sw_proc_release(w->stolen);
        sw_proc *p;
        while ((p = pop(w, false))) sw_proc_release(p);
        sw_http_worker_stop(w); /* its transfers, polls and timer, before the loop's handles */
        sw_exec_worker_stop(w); /* commands let go of, not reaped yet */
        sw_park_close(&w->park);
        uv_walk(&w->loop, close_handle, NULL);
        uv_run(&w->loop, UV_RUN_DEFAULT);
        uv_loop_close(&w->loop);
        pthread_mutex_destroy(&w->lock);
        pthread_mutex_destroy(&w->slice_lock);
    }
    free(ws->w);
    ws->w = NULL;
}
