/* The floor of a round trip across worker threads: two threads, each running a libuv loop,
 * pass a counter back and forth, two ways in the same run:
 *  - uv_async: a uv_async_send each way (an eventfd write and a wake-up of a sleeping thread),
 *    what two processes on two workers paid before the workers learnt to spin;
 *  - park: what the workers do now (runtime/worker_park.c, docs/architecture.md "Waking a
 *    worker"): spin briefly while the other is awake, then park in uv_run behind the sleeping
 *    flag; a sender writes the eventfd only when it claims a parked peer.
 * bench/messaging.sh prints Steward's ping-pong across workers beside them.
 * usage: bench_wake [ROUND_TRIPS] */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uv.h>

#include "worker_park.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds from starting both threads (b first, then a; then kick, if any) until both end. */
static double timed_pair(uv_thread_cb run, void *a, void *b, void (*kick)(void *), void *arg)
{
    uv_thread_t ta, tb;
    double t0 = now();
    uv_thread_create(&tb, run, b);
    uv_thread_create(&ta, run, a);
    if (kick) kick(arg);
    uv_thread_join(&ta);
    uv_thread_join(&tb);
    return now() - t0;
}

/* ---- uv_async ---- */

typedef struct side {
    uv_loop_t loop;
    uv_async_t wake;
    struct side *peer;
    atomic_long *count; /* round trips left, shared */
    bool ping;          /* the side that counts a round trip when the ball comes back */
} side;

/* Each side closes only its own handle (uv_close is for the loop's thread): the ping side
 * when the count runs out, after a last wake-up that tells the other side to. */
static void on_wake(uv_async_t *a)
{
    side *s = a->data;
    bool last = s->ping ? atomic_fetch_sub(s->count, 1) <= 1 : atomic_load(s->count) <= 0;
    if (!last || s->ping) uv_async_send(&s->peer->wake);
    if (last) uv_close((uv_handle_t *)&s->wake, NULL);
}

static void run_loop(void *arg) { uv_run(&((side *)arg)->loop, UV_RUN_DEFAULT); }

static void kick_async(void *wake) { uv_async_send(wake); }

static double async_rate(long n)
{
    atomic_long count = n;
    side a = {.ping = true, .count = &count}, b = {.count = &count};
    a.peer = &b;
    b.peer = &a;
    side *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        uv_loop_init(&both[i]->loop);
        uv_async_init(&both[i]->loop, &both[i]->wake, on_wake);
        both[i]->wake.data = both[i];
    }
    double dt = timed_pair(run_loop, &a, &b, kick_async, &b.wake);
    uv_loop_close(&a.loop);
    uv_loop_close(&b.loop);
    return n / dt;
}

/* ---- park ---- */

typedef struct parker {
    uv_loop_t loop;
    sw_park park;
    struct parker *peer;
    atomic_int *turn; /* whose move it is: 0 ping, 1 pong; -1 the end */
    int me;
    long n; /* round trips (ping) */
} parker;

static bool my_turn(void *arg)
{
    parker *p = arg;
    int t = atomic_load_explicit(p->turn, memory_order_acquire);
    return t == p->me || t < 0;
}

static void pass(parker *p, int to)
{
    atomic_store_explicit(p->turn, to, memory_order_release);
    sw_park_wake(&p->peer->park);
}

static void run_parker(void *arg)
{
    parker *p = arg;
    sw_park_awake_begin();
    for (long i = 0;; i++) {
        while (!my_turn(p))
            if (!sw_park_spin(&p->park, my_turn, p)) sw_park_sleep(&p->park, &p->loop, my_turn, p);
        if (atomic_load(p->turn) < 0) break;
        pass(p, p->me == 0 && i + 1 >= p->n ? -1 : 1 - p->me);
        if (p->me == 0 && i + 1 >= p->n) break;
    }
    sw_park_awake_end();
    sw_park_close(&p->park);
    uv_run(&p->loop, UV_RUN_DEFAULT);
}

static double park_rate(long n)
{
    atomic_int turn = 0;
    parker a = {.turn = &turn, .me = 0, .n = n}, b = {.turn = &turn, .me = 1};
    a.peer = &b;
    b.peer = &a;
    parker *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        uv_loop_init(&both[i]->loop);
        if (sw_park_init(&both[i]->park, &both[i]->loop) != 0) exit(1);
    }
    double dt = timed_pair(run_parker, &a, &b, NULL, NULL);
    uv_loop_close(&a.loop);
    uv_loop_close(&b.loop);
    return n / dt;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    printf("uv_async round trips between two loop threads: %ld = %.0f round trips/s\n", n,
           async_rate(n));
    long m = n * 10; /* ten times as many: each is far shorter */
    printf("spin-then-park round trips between two loop threads: %ld = %.0f round trips/s\n", m,
           park_rate(m));
    return 0;
}
