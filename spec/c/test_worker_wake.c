/* Waking workers (runtime/worker_park.c, docs/architecture.md "Waking a worker"), on real
 * worker threads and their loops: two producer threads send millions of calls to the three
 * workers of two pools in random bursts with random delays, some forwarded from worker to
 * worker, and wait for all of them to be handled every so often, so that workers park and
 * wake again and again; a lost wake-up leaves a producer waiting, which the watchdog reports.
 * Then each worker re-arms a timer whose callback queues a call to its own worker (the
 * wake-up from inside a park's own loop). Checked: every call runs exactly once, in order
 * per producer and worker, and nothing stops moving. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>

#include <cmocka.h>

#include "worker.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
#define PER_PRODUCER 500000 /* several times slower under sanitizers */
#else
#define PER_PRODUCER 1000000
#endif

#define PRODUCERS  2
#define TARGETS    3    /* two workers of one pool, one of another */
#define SLOTS      1024 /* each producer's messages in flight at most, reused once handled */
#define ACK_EVERY  64   /* about this often a producer waits for all its messages */
#define STALL_SECS 10   /* no progress for this long: a lost wake-up */
/* Parks the workers must have made (each a pass through the window where a wake-up could be
 * lost): producers go on past PER_PRODUCER, up to 4 times as many, until they have; how many a
 * run makes depends on the timing (70k-280k usually, under 1,000 in a fast sanitizer run). */
#define MIN_PARKS  1000

typedef struct msg {
    sw_worker_call call; /* first: the call is the message */
    int producer, target;
    uint64_t seq;     /* per producer and target */
    bool forward;     /* the first worker sends it on to another */
    atomic_bool busy; /* sent, not handled yet: the slot cannot be reused */
} msg;

typedef struct producer {
    int id;
    uv_thread_t thread;
    msg slots[SLOTS];
    uint64_t next_seq[TARGETS];
    atomic_uint_fast64_t handled;
    uint64_t sent;
    uint64_t rng;
    bool stalled;
} producer;

/* A timer on each worker whose callback queues a call to that same worker. */
typedef struct self_timer {
    uv_timer_t h; /* first: sw_workers_stop frees timers with free(handle) */
    sw_worker_call call;
    sw_worker *w;
    atomic_uint_fast64_t rounds;
} self_timer;

static sw_workers pool_a, pool_b;
static sw_worker *targets[TARGETS];
static producer producers[PRODUCERS];
static uint64_t expect[TARGETS][PRODUCERS]; /* the next seq a worker expects: its own row */
static atomic_bool out_of_order;
static self_timer *timers[TARGETS];

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static int index_of(sw_worker *w)
{
    for (int i = 0; i < TARGETS; i++)
        if (targets[i] == w) return i;
    return -1;
}

static void handle(sw_worker_call *call)
{
    msg *m = (msg *)call;
    sw_worker *here = sw_worker_current();
    if (m->forward) { /* first hop: check the order, then on to the next worker */
        m->forward = false;
        if (expect[m->target][m->producer]++ != m->seq) atomic_store(&out_of_order, true);
        sw_worker_call_on(targets[(m->target + 1) % TARGETS], &m->call);
        return;
    }
    if (here == targets[m->target] && expect[m->target][m->producer]++ != m->seq)
        atomic_store(&out_of_order, true);
    producer *p = &producers[m->producer];
    atomic_store_explicit(&m->busy, false, memory_order_release); /* m is the producer's again */
    atomic_fetch_add_explicit(&p->handled, 1, memory_order_release);
}

/* Waits until at least `want` of p's messages are handled and slot (if any) is free; false if
 * nothing moved for STALL_SECS. Yields, then naps: the producer's own wait must not hide a
 * worker's. */
static bool wait_handled(producer *p, uint64_t want, msg *slot)
{
    uint64_t last = atomic_load_explicit(&p->handled, memory_order_acquire);
    double since = now_s();
    for (int i = 0;
         last < want || (slot && atomic_load_explicit(&slot->busy, memory_order_acquire)); i++) {
        if (i < 64) sched_yield();
        else sleep_us(20);
        uint64_t h = atomic_load_explicit(&p->handled, memory_order_acquire);
        if (h != last) last = h, since = now_s();
        else if (now_s() - since > STALL_SECS) return false;
    }
    return true;
}

static bool send_one(producer *p)
{
    int t = (int)(next_rand(&p->rng) % TARGETS);
    msg *m = &p->slots[p->sent % SLOTS];
    if (!wait_handled(p, 0, m)) return false;
    atomic_store_explicit(&m->busy, true, memory_order_relaxed);
    m->call.fn = handle;
    m->producer = p->id;
    m->target = t;
    m->seq = p->next_seq[t]++;
    m->forward = next_rand(&p->rng) % 8 == 0;
    p->sent++;
    sw_worker_call_on(targets[t], &m->call);
    return true;
}

/* Random delays between bursts: short spins often, naps of 20-220 us rarely (workers park). */
static void random_delay(producer *p)
{
    uint64_t r = next_rand(&p->rng);
    if (r % 4 == 0)
        for (volatile unsigned i = (unsigned)(r >> 8) % 1024; i > 0; i--) {
        }
    else if (r % 4096 == 1) sleep_us(20 + (long)((r >> 12) % 200));
}

static uint64_t parks_so_far(void)
{
    uint64_t parks = 0;
    for (int i = 0; i < TARGETS; i++) parks += atomic_load(&targets[i]->park.parks);
    return parks;
}

static bool more_to_send(const producer *p)
{
    return p->sent < PER_PRODUCER || (p->sent < 4 * PER_PRODUCER && parks_so_far() < MIN_PARKS);
}

static void produce(void *arg)
{
    producer *p = arg;
    while (more_to_send(p)) {
        int burst = 1 + (int)(next_rand(&p->rng) % 16);
        for (int i = 0; i < burst && more_to_send(p); i++) {
            if (!send_one(p)) goto stalled;
            if (next_rand(&p->rng) % ACK_EVERY == 0 && !wait_handled(p, p->sent, NULL))
                goto stalled;
        }
        random_delay(p);
    }
    if (wait_handled(p, p->sent, NULL)) return;
stalled:
    p->stalled = true;
}

static void timer_fired(uv_timer_t *h)
{
    self_timer *t = (self_timer *)h;
    sw_worker_call_on(t->w, &t->call); /* from the worker's own loop, maybe inside its park */
}

/* On the worker: count a round and start the next (the timer stays stopped until then, so
 * only the call, not a later firing, can move it on). */
static void rearm(sw_worker_call *call)
{
    self_timer *t = (self_timer *)((char *)call - offsetof(self_timer, call));
    atomic_fetch_add_explicit(&t->rounds, 1, memory_order_relaxed);
    if (sw_worker_current() == t->w) uv_timer_start(&t->h, timer_fired, 1, 0);
}

static void start_timer(sw_worker_call *call)
{
    sw_worker *w = sw_worker_current();
    self_timer *t = timers[index_of(w)];
    uv_timer_init(&w->loop, &t->h);
    t->call.fn = rearm;
    uv_timer_start(&t->h, timer_fired, 1, 0);
    free(call);
}

static uint64_t timer_rounds(int i) { return atomic_load(&timers[i]->rounds); }

static void test_no_lost_wakeups(void **state)
{
    (void)state;
    assert_int_equal(sw_workers_start(&pool_a, 2, SW_SLICE_NS), 0);
    assert_int_equal(sw_workers_start(&pool_b, 1, SW_SLICE_NS), 0);
    targets[0] = &pool_a.w[0], targets[1] = &pool_a.w[1], targets[2] = &pool_b.w[0];
    double t0 = now_s();
    for (int i = 0; i < PRODUCERS; i++) {
        producers[i].id = i;
        producers[i].rng = 0x9E3779B97F4A7C15u * (uint64_t)(i + 1);
        uv_thread_create(&producers[i].thread, produce, &producers[i]);
    }
    for (int i = 0; i < PRODUCERS; i++) uv_thread_join(&producers[i].thread);
    double dt = now_s() - t0;
    for (int i = 0; i < PRODUCERS; i++) {
        producer *p = &producers[i];
        if (p->stalled)
            fail_msg("producer %d: no progress for %d s after %llu of %llu handled (lost wake-up)",
                     i, STALL_SECS, (unsigned long long)atomic_load(&p->handled),
                     (unsigned long long)p->sent);
        assert_int_equal(atomic_load(&p->handled), p->sent);
        assert_true(p->sent >= PER_PRODUCER);
    }
    assert_false(atomic_load(&out_of_order));
    /* Only now (a timer would end a lost wake-up's wait): a timer whose callback queues a call
     * to its own worker, from inside the park's loop, that re-arms it. */
    for (int i = 0; i < TARGETS; i++) {
        timers[i] = calloc(1, sizeof *timers[i]);
        timers[i]->w = targets[i];
        sw_worker_call *c = calloc(1, sizeof *c);
        c->fn = start_timer;
        sw_worker_call_on(targets[i], c);
    }
    for (int i = 0; i < TARGETS; i++) {
        uint64_t from = timer_rounds(i);
        double since = now_s();
        while (timer_rounds(i) < from + 5 && now_s() - since < STALL_SECS) sleep_us(1000);
        if (timer_rounds(i) < from + 5)
            fail_msg("worker %d: its timer's call to itself did not run (stuck in its park)", i);
    }
    uint64_t parks = parks_so_far(), sent = 0;
    for (int i = 0; i < PRODUCERS; i++) sent += producers[i].sent;
    sw_workers_stop(&pool_a);
    sw_workers_stop(&pool_b);
    printf("# %llu messages from %d producers in %.2f s (%.0f/s), %llu parks\n",
           (unsigned long long)sent, PRODUCERS, dt, (double)sent / dt, (unsigned long long)parks);
    assert_true(parks >= MIN_PARKS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_lost_wakeups)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
