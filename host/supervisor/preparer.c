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
    size_t made;        /* under the preparer's lock */
};

/* Claims and prepares one of the batch's spawns: 0 when none is left. */
static size_t help_one(sw_preparer *pr, sw_prep_batch *b)
{
    char err[8]; /* a failure is made again, and reported, by its launch */
    size_t i = atomic_fetch_add(&b->next, 1);
    if (i >= b->n) return 0;
    b->out[i] = sw_proc_prepare(pr->rt, &b->spawns[i], err, sizeof err);
    return 1;
}

/* Claims and prepares the batch's spawns until none is left: how many it made. */
static size_t help(sw_preparer *pr, sw_prep_batch *b)
{
    size_t made = 0;
    while (help_one(pr, b)) made++;
    return made;
}

void sw_preparer_batch(sw_preparer *pr, const sw_spawn *spawns, sw_proc **out, size_t n)
{
    sw_prep_batch b = {.spawns = spawns, .out = out, .n = n};
    atomic_init(&b.next, 0);
    /* The first here, before the preparer's thread joins: the host's first state sets up the
     * vm's shared tables once (call_once, host/vm), and a state made on this thread meanwhile
     * must not race it where a sanitizer cannot see the once's ordering. */
    b.made = help_one(pr, &b);
    uv_mutex_lock(&pr->lock);
    pr->batch = &b;
    uv_cond_signal(&pr->more);
    uv_mutex_unlock(&pr->lock);
    size_t made = help(pr, &b);
    uv_mutex_lock(&pr->lock);
    b.made += made;
    /* all made, and the preparer's thread out of it (if it ever came in: after this it cannot) */
    while (b.made < n || pr->batch_in) uv_cond_wait(&pr->batch_done, &pr->lock);
    pr->batch = NULL;
    uv_mutex_unlock(&pr->lock);
}

static void preparer_main(void *arg)
{
    sw_preparer *pr = arg;
    uv_mutex_lock(&pr->lock);
    for (;;) {
        while (!pr->head && !(pr->batch && !pr->batch_in) && !pr->stopping)
            uv_cond_wait(&pr->more, &pr->lock);
        if (pr->stopping) break;
        if (pr->batch && !pr->batch_in) {
            sw_prep_batch *b = pr->batch;
            pr->batch_in = true;
            uv_mutex_unlock(&pr->lock);
            size_t made = help(pr, b);
            uv_mutex_lock(&pr->lock);
            b->made += made;
            pr->batch = NULL; /* taken once: the caller finishes what is left */
            pr->batch_in = false;
            uv_cond_signal(&pr->batch_done);
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
    uv_cond_init(&pr->batch_done);
    if (uv_thread_create(&pr->thread, preparer_main, pr) != 0) {
        uv_cond_destroy(&pr->more);
        uv_cond_destroy(&pr->batch_done);
        uv_mutex_destroy(&pr->lock);
        return -1;
    }
    pr->started = true;
    return 0;
}

int sw_preparer_submit(sw_preparer *pr, const sw_spawn *s, void *tag)
{
    sw_prep_job *j = calloc(1, sizeof *j);
    if (!j) return -1;
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
        return -1;
    }
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
    uv_cond_destroy(&pr->batch_done);
    uv_mutex_destroy(&pr->lock);
}
