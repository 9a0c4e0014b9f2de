/* The floor of a round trip across worker threads: two threads, each running a libuv loop,
 * pass a counter back and forth with uv_async_send (an eventfd write and a wake-up each way),
 * as two processes on two workers pay today. bench/messaging.sh prints Steward's ping-pong
 * across workers beside it. usage: bench_wake [ROUND_TRIPS] */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uv.h>

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

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
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
    uv_thread_t ta, tb;
    double t0 = now();
    uv_thread_create(&tb, run_loop, &b);
    uv_thread_create(&ta, run_loop, &a);
    uv_async_send(&b.wake);
    uv_thread_join(&ta);
    uv_thread_join(&tb);
    double dt = now() - t0;
    printf("uv_async round trips between two loop threads: %ld in %.3f s = %.0f round trips/s\n", n,
           dt, n / dt);
    uv_loop_close(&a.loop);
    uv_loop_close(&b.loop);
    return 0;
}
