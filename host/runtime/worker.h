/* Worker threads. Each owns a libuv loop (its timers fire there) and a run queue of runnable
 * processes. A process becomes runnable on its home worker; an idle worker steals from busy
 * ones before it sleeps, and a worker whose queue grows wakes a sleeping one. Chatty
 * processes thus stay on one thread, where a wake-up costs no cross-thread signal. */
#ifndef STEWARD_WORKER_H
#define STEWARD_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <uv.h>

#include "worker_park.h"

typedef struct sw_proc sw_proc;
typedef struct sw_workers sw_workers;
typedef struct sw_vm sw_vm;
typedef struct sw_http_multi sw_http_multi;

/* A slice longer than this is interrupted by the pool's watchdog (processes without an
 * explicit limits.reductions: no count hook, so no cost per instruction). */
#define SW_SLICE_NS    (2 * 1000 * 1000)
#define SW_SLICE_NEVER UINT64_MAX /* benchmarks only: a watchdog that never interrupts */

/* A function to run on a worker's thread (e.g. stop a timer that lives on its loop). */
typedef struct sw_worker_call {
    struct sw_worker_call *next;
    void (*fn)(struct sw_worker_call *call);
} sw_worker_call;

typedef struct sw_worker {
    int index;
    sw_workers *all;
    uv_thread_t thread;
    uv_loop_t loop;
    sw_park park;         /* how it waits when idle, and how others wake it (worker_park.h) */
    pthread_mutex_t lock; /* guards the run queue */
    sw_proc *head, *tail;
    /* Length of the run queue: changed only under lock, read without it by thieves (a stale
     * peek only delays a steal) and by the worker about to park (ordered by the park's
     * fences: worker_park.c). */
    atomic_size_t queued;
    _Atomic(sw_worker_call *) calls; /* pushed by any thread, taken whole by the worker */
    sw_proc *stolen;                 /* the worker's: what its spin stole, to run next */
    unsigned peeks;                  /* the worker's: spin checks, to look at others' queues */
    /* The running slice, published without a lock or a clock read (both cost more than a
     * ping-pong hop can spare): its vm and a count of slices begun. The watchdog times a
     * slice from when it first sees its number; it interrupts slice_vm only while holding
     * slice_lock, which sw_worker_slice_retire takes (on every worker) before a vm is freed. */
    _Atomic(sw_vm *) slice_vm;
    atomic_uint_fast64_t slice_seq;
    pthread_mutex_t slice_lock;
    uint64_t seen_seq, seen_at; /* watchdog only: the slice number it saw, and when */
    sw_http_multi *http;        /* HTTP transfers on this loop (http_client.c), made on first use */
    atomic_uint_fast64_t
        ticks; /* watchdog checks so far: a busy worker polls its loop when it moves */
} sw_worker;

struct sw_workers {
    int n;
    sw_worker *w;
    atomic_bool stopping;
    atomic_uint next; /* round-robin for processes spawned from outside workers */
    uv_thread_t watchdog;
    uint64_t slice_ns; /* SW_SLICE_NS, or SW_SLICE_NEVER */
};

/* Starts n worker threads whose slices last slice_ns. 0, or a negative libuv error. */
int sw_workers_start(sw_workers *ws, int n, uint64_t slice_ns);
/* Stops and joins all workers; processes still queued are not run. */
void sw_workers_stop(sw_workers *ws);

/* The worker running on this thread, or NULL (main thread). */
sw_worker *sw_worker_current(void);
/* Where a new process should live: the caller's worker, else round-robin. */
sw_worker *sw_workers_pick(sw_workers *ws);

/* Queues p (which must not be queued already) on w, taking a reference, and wakes w if it
 * sleeps. Thread-safe. */
void sw_worker_enqueue(sw_worker *w, sw_proc *p);
/* Runs fn on w's thread soon. Thread-safe. */
void sw_worker_call_on(sw_worker *w, sw_worker_call *call);

/* Brackets every run of Lua code on a worker: between them, the watchdog may interrupt vm
 * once the slice has run about SW_SLICE_NS (1.5 to 3.5 ms: it checks every 1 ms). Thread: w's. */
void sw_worker_slice_begin(sw_worker *w, sw_vm *vm);
void sw_worker_slice_end(sw_worker *w);
/* Call before freeing a vm whose last slice ran on w, once no slice of it can begin again:
 * waits out any watchdog check that may still be interrupting it, on any worker of w's pool
 * (an earlier slice may have run on another). Thread: w's. */
void sw_worker_slice_retire(sw_worker *w);

#endif
