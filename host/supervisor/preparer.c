/* The preparer thread: a queue of spawn descriptions, prepared one at a time. */
#include "preparer.h"

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

static void preparer_main(void *arg)
{
    sw_preparer *pr = arg;
    uv_mutex_lock(&pr->lock);
    for (;;) {
        while (!pr->head && !pr->stopping) uv_cond_wait(&pr->more, &pr->lock);
        if (pr->stopping) break;
        sw_prep_job *j = pr->head;
        pr->head = j->next;
        if (!pr->head) pr->tail = NULL;
        uv_mutex_unlock(&pr->lock);
        char err[256];
        sw_proc *p = sw_proc_prepare(pr->rt, &j->spawn, err, sizeof err);
        uv_mutex_lock(&pr->lock);
        if (pr->stopping && p) { /* nobody will launch it: it goes now, while the runtime lives */
            sw_proc_discard_prepared(p);
            p = NULL;
        }
        pr->done(j->tag, p);
        job_free(j);
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
    uv_mutex_destroy(&pr->lock);
}
