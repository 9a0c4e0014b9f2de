/* How an idle worker waits for work (docs/architecture.md "Waking a worker"): it spins for a
 * few microseconds while another worker is awake, learning how long is worth it, then parks in
 * its loop's uv_run behind a sleeping flag. A sender that finds the flag raised swaps it back
 * and writes the worker's eventfd; exactly one sender does so per park, so a burst costs one
 * syscall, and a worker that is awake costs a sender none. The scheduler (run queues,
 * stealing) is worker.c's; this file is only the waiting. */
#ifndef STEWARD_WORKER_PARK_H
#define STEWARD_WORKER_PARK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "wake.h"

typedef struct sw_park {
    /* 1 from just before the owner parks until it or a sender swaps it back to 0: the sender
     * that does owes the wake-up. */
    atomic_uint sleeping;
    atomic_uint_fast64_t claimed_at; /* when that sender swapped it (uv_hrtime), for learning */
    sw_wake wake;                    /* the eventfd the park's uv_run watches */
    /* The owner's alone: */
    bool in_loop;       /* inside the park's uv_run (a wake-up from its callbacks is uv_stop) */
    uint64_t parked_at; /* when the flag was last raised (uv_hrtime), for learning */
    uint64_t budget_ns; /* how long to spin before parking, learnt from each park; 0: none */
    uint64_t wake_ns;   /* moving average of what a wake-up from parked costs */
    uint64_t spun_ns;   /* how long the last spin ran without finding work */
    uint64_t quiet_until, quiet_ns, last_slow; /* no spinning: another thread wants the CPU */
    atomic_uint_fast64_t parks; /* times it waited in uv_run (read by tests, benches) */
} sw_park;

/* Whether the owner has something to do. Called often while spinning: a few relaxed loads. */
typedef bool (*sw_park_check)(void *arg);

/* Sets k up on loop (its eventfd handle). 0, or -1 if no eventfd could be made. Thread: the
 * loop's, or any before the loop runs. */
int sw_park_init(sw_park *k, uv_loop_t *loop);
/* The same, with cb run on the loop's thread after each wake-up's write is read (an owner
 * whose loop another part runs takes its work there: the supervisor's). */
int sw_park_init_cb(sw_park *k, uv_loop_t *loop, sw_wake_cb cb);
/* Closes k's handle (the loop then runs to let it go). Thread: the loop's. */
void sw_park_close(sw_park *k);

/* The owner's thread counts as awake between these (a spinning worker needs an awake one to
 * send it something). Thread: the owner's, at its start and end. */
void sw_park_awake_begin(void);
void sw_park_awake_end(void);

/* Wakes k's owner if it is parked. Call after making the work visible (an unlock or a release
 * store). Returns whether this call owed the wake-up (and wrote it). Thread: any but the
 * owner's. */
bool sw_park_wake(sw_park *k);

/* Spins while it is worth it, calling found (which may take the work it finds, e.g. steal)
 * between pauses. Returns whether found returned true. Thread: the owner's. */
bool sw_park_spin(sw_park *k, sw_park_check found, void *arg);
/* Parks in uv_run(loop, UV_RUN_ONCE) unless has_work, checked after the flag is raised,
 * says there is work already; returns after one pass of the loop (a wake-up, a timer, a
 * socket, uv_stop). Thread: the owner's. */
void sw_park_sleep(sw_park *k, uv_loop_t *loop, sw_park_check has_work, void *arg);
/* sw_park_sleep's halves around a wait the owner does not run itself (the supervisor's loop:
 * a uv_prepare before its poll, a uv_check after). begin raises the flag and returns true
 * (the wait may block: a sender will write), or lowers it again and returns false when
 * has_work finds work already. end, after the wait that followed a true begin, lowers the flag
 * and learns. Thread: the owner's. */
bool sw_park_sleep_begin(sw_park *k, sw_park_check has_work, void *arg);
void sw_park_sleep_end(sw_park *k);

#endif
