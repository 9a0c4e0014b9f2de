/* A thread that prepares processes ahead of time (sw_proc_prepare: create the LuaJIT state,
 * load the chunk) so that creating a state, most of a restart's cost, runs beside the loop
 * that asked for it instead of on it. Results come back through a callback on the preparer's
 * thread (the supervisor posts them to its loop). */
#ifndef STEWARD_PREPARER_H
#define STEWARD_PREPARER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "proc.h"

typedef struct sw_prep_job sw_prep_job;
/* Called on the preparer's thread (not holding its lock) with the prepared process (NULL if preparing failed). */
typedef void (*sw_prepared_fn)(void *tag, sw_proc *p);

typedef struct sw_prep_batch sw_prep_batch;

typedef struct sw_preparer {
    sw_runtime *rt;
    uv_thread_t thread;
    uv_mutex_t lock;
    uv_cond_t more;
    sw_prep_job *head, *tail;
    bool stopping, started;
    sw_prepared_fn done;
    sw_prep_batch *batch; /* sw_preparer_batch under way, or NULL */
    uint64_t batch_gen;   /* batches begun */
    uint64_t joined_gen;  /* the last one the preparer's thread joined */
} sw_preparer;

int sw_preparer_start(sw_preparer *pr, sw_runtime *rt, sw_prepared_fn done);
/* Queues a job; the spawn's entry, registry, service and args are copied or retained. -1 if
 * out of memory. Thread: any. */
int sw_preparer_submit(sw_preparer *pr, const sw_spawn *s, void *tag);
/* Prepares the n spawns into out[] (NULL where preparing failed), the calling thread and the
 * preparer's sharing them (its queued jobs wait): a start of many services makes their
 * processes on two cores. Returns once every spawn is claimed and the caller's are made, not
 * waiting for the one the preparer's thread may still be on (its out[] stays NULL). Thread:
 * one at a time, not the preparer's. */
void sw_preparer_batch(sw_preparer *pr, const sw_spawn *spawns, sw_proc **out, size_t n);
/* Stops the thread after the job it is on (whose process is discarded); jobs not begun are
 * dropped. Every job is reported, those with NULL. Joins. */
void sw_preparer_stop(sw_preparer *pr);

#endif
