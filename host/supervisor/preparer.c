/* The preparer thread: a queue of spawn descriptions, prepared one at a time. */
#include "preparer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct sw_prep_job {
    sw_prep_job *next;
    sw_spawn spawn; /* its args, service and registry are the job's own */
    void *tag;
};

static void job_free(sw_prep_job *j)
{
    free((void *)j->spawn.args);
    free((void *)j->spawn.service);
    sw_registry_free(j->spawn.registry);
    free(j);
}

struct sw_prep_batch {
    const sw_spawn *spawns;
    sw_proc **out;
    size_t n;
    atomic_size_t next; /* the next spawn to claim */
};

/* A job for spawn s: its entry, registry, service and args copied or retained. NULL if out of
 * memory. */
static sw_prep_job *job_new(const sw_spawn *s, void *tag)
{
    sw_prep_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->spawn = *s;
    j->tag = tag;
    j->spawn.registry = sw_registry_retain(s->registry);
    j->spawn.service = s->service ? strdup(s->service) : NULL;
    j->spawn.args = NULL;
    if (s->args) {
        unsigned char *a = malloc(s->args_len ? s->args_len : 1);
        if (a) memcpy(a, s->args, s->args_len);
        j->spawn.args = a;
    }
    if ((s->service && !j->spawn.service) || (s->args && !j->spawn.args)) {
        job_free(j);
        return NULL;
    }
    return j;
}

/* Claims and prepares the batch's spawns until none is left (the caller's side). */
static void help(sw_preparer *pr, sw_prep_batch *b)
{
    char err[8]; /* a failure is made again, and reported, by its launch */
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;)
        b->out[i] = sw_proc_prepare(pr->rt, &b->spawns[i], err, sizeof err);
}

void sw_preparer_batch(sw_preparer *pr, const sw_spawn *spawns, sw_proc **out, size_t n)
{
    sw_prep_batch b = {.spawns = spawns, .out = out, .n = n};
    for (size_t i = 0; i < n; i++) out[i] = NULL;
    /* The first here, before the preparer's thread joins: the host's first state sets up the
     * vm's shared tables once (call_once, host/vm), and a state made on this thread meanwhile
     * must not race it where a sanitizer cannot see the once's ordering. */
    atomic_init(&b.next, 1);
    char err[8];
    if (n) out[0] = sw_proc_prepare(pr->rt, &spawns[0], err, sizeof err);
    uv_mutex_lock(&pr->lock);
    pr->batch = &b;
    pr->batch_gen++;
    uv_cond_signal(&pr->more);
    uv_mutex_unlock(&pr->lock);
    help(pr, &b);
    /* Every spawn is claimed. One the preparer's thread is still on is not waited for (it may
     * be descheduled for milliseconds on a loaded machine): its process is discarded when
     * made, and that service's launch makes its own. */
    uv_mutex_lock(&pr->lock);
    pr->batch = NULL;
    uv_mutex_unlock(&pr->lock);
}

/* The preparer's side of the batch under way (its lock held): claims under the lock, so the
 * caller cannot leave between a claim and the copy of that spawn; what it makes after the
 * caller left is discarded. */
static void join_batch(sw_preparer *pr)
{
    sw_prep_batch *b = pr->batch;
    uint64_t gen = pr->batch_gen;
    pr->joined_gen = gen;
    char err[8];
    for (size_t i;
         pr->batch == b && pr->batch_gen == gen && (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        sw_prep_job *j = job_new(&b->spawns[i], NULL);
        uv_mutex_unlock(&pr->lock);
        sw_proc *p = j ? sw_proc_prepare(pr->rt, &j->spawn, err, sizeof err) : NULL;
        uv_mutex_lock(&pr->lock);
        bool ours = pr->batch == b && pr->batch_gen == gen;
        if (ours) b->out[i] = p;
        uv_mutex_unlock(&pr->lock); /* the rest without the lock the caller takes to leave */
        if (!ours && p) sw_proc_discard_prepared(p);
        if (j) job_free(j);
        uv_mutex_lock(&pr->lock);
    }
}

static void preparer_main(void *arg)
{
    sw_preparer *pr = arg;
    uv_mutex_lock(&pr->lock);
    for (;;) {
        while (!pr->head && !(pr->batch && pr->joined_gen != pr->batch_gen) && !pr->stopping)
            uv_cond_wait(&pr->more, &pr->lock);
        if (pr->stopping) break;
        if (pr->batch && pr->joined_gen != pr->batch_gen) {
            join_batch(pr);
            continue;
        }
        sw_prep_job *j = pr->head;
        pr->head = j->next;
        if (!pr->head) pr->tail = NULL;
        uv_mutex_unlock(&pr->lock);
        char err[256];
        sw_proc *p = sw_proc_prepare(pr->rt, &j->spawn, err, sizeof err);
        uv_mutex_lock(&pr->lock);
        bool stopping = pr->stopping;
        uv_mutex_unlock(&pr->lock);
        if (stopping && p) { /* nobody will launch it: it goes now, while the runtime lives */
            sw_proc_discard_prepared(p);
            p = NULL;
        }
        /* outside the lock: the report wakes the supervisor's loop (a syscall), and the loop
         * submits the next job meanwhile without waiting for it */
        pr->done(j->tag, p);
        job_free(j);
        uv_mutex_lock(&pr->lock);
    }
    uv_mutex_unlock(&pr->lock);
}

int sw_preparer_start(sw_preparer *pr, sw_runtime *rt, sw_prepared_fn done)
{
    memset(pr, 0, sizeof *pr);
    pr->rt = rt;
    pr->done = done;
    uv_mutex_init(&pr->lock);
    uv_cond_init(&pr->more);
    if (uv_thread_create(&pr->thread, preparer_main, pr) != 0) {
        uv_cond_destroy(&pr->more);
        uv_mutex_destroy(&pr->lock);
        return -1;
    }
    pr->started = true;
    return 0;
}

int sw_preparer_submit(sw_preparer *pr, const sw_spawn *s, void *tag)
{
    sw_prep_job *j = job_new(s, tag);
    if (!j) return -1;
    uv_mutex_lock(&pr->lock);
    if (pr->tail) pr->tail->next = j;
    else pr->head = j;
    pr->tail = j;
    uv_cond_signal(&pr->more);
    uv_mutex_unlock(&pr->lock);
    return 0;
}

void sw_preparer_stop(sw_preparer *pr)
{
    if (!pr->started) return;
    uv_mutex_lock(&pr->lock);
    pr->stopping = true;
    uv_cond_signal(&pr->more);
    uv_mutex_unlock(&pr->lock);
    uv_thread_join(&pr->thread);
    pr->started = false;
    for (sw_prep_job *j = pr->head, *next; j; j = next) {
        next = j->next;
        pr->done(j->tag, NULL);
        job_free(j);
    }
    pr->head = pr->tail = NULL;
    uv_cond_destroy(&pr->more);
    uv_mutex_destroy(&pr->lock);
}
