/* Process files on libuv's thread pool (see fs.h): the requests a process has in flight and
 * the files it holds open, the deliveries that resume its tasks, and what happens to both
 * when it ends (a request finishes unowned and closes what it opened; files are closed by a
 * job of their own, so not even a slow close blocks the worker's loop). */
#include "fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mailbox.h"
#include "proc.h"
#include "worker.h"

struct sw_fs_owned {
    sw_fs_req *reqs;
    sw_fs_file *files;
    size_t n_files;
    sw_fs_req *finishing; /* its finish is running (freed by the next dispatch if it raised) */
};

static sw_fs_owned *owned(sw_proc *p) { return p->fs ? p->fs : (p->fs = calloc(1, sizeof *p->fs)); }

size_t sw_fs_file_count(const sw_proc *p) { return p->fs ? p->fs->n_files : 0; }

/* ---- requests ---- */

sw_fs_req *sw_fs_req_new(sw_proc *p, sw_fs_op op)
{
    sw_fs_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->job.op = op;
    r->job.fd = -1;
    r->close_fd = -1;
    r->proc = p;
    return r;
}

void sw_fs_req_free(sw_fs_req *r)
{
    if (!r) return;
    sw_fs_job_clear(&r->job, true); /* an fd an open made that nobody took is closed */
    if (r->close_fd >= 0) close(r->close_fd);
    free(r->resource);
    free(r);
}

static void on_work(uv_work_t *w)
{
    sw_fs_req *r = w->data;
    sw_fs_job_run(&r->job);
}

static bool stopping(const sw_worker *w) { return atomic_load(&w->all->stopping); }

static void on_done(uv_work_t *w, int status);

/* A request nobody waits for any more: what its job opened (or the fd of the file it worked
 * on) is closed by one more job, on the same loop, unless the loop is stopping. */
static void finish_unowned(sw_fs_req *r)
{
    int fd = r->close_fd >= 0 ? r->close_fd : r->job.op == SW_FS_OP_OPEN ? r->job.fd : -1;
    r->close_fd = -1;
    r->job.fd = -1;
    if (fd < 0 || stopping(r->worker) || r->job.op == SW_FS_OP_CLOSE) {
        if (fd >= 0) close(fd);
        sw_fs_req_free(r);
        return;
    }
    sw_fs_job_clear(&r->job, false);
    r->job = (sw_fs_job){.op = SW_FS_OP_CLOSE, .fd = fd};
    r->done = false;
    if (uv_queue_work(&r->worker->loop, &r->work, on_work, on_done) != 0) sw_fs_req_free(r);
}

static void on_done(uv_work_t *w, int status)
{
    sw_fs_req *r = w->data;
    r->done = true;
    if (status == UV_ECANCELED) r->job.err = status;
    if (!r->proc) {
        finish_unowned(r);
        return;
    }
    /* The runtime is stopping: the process will not run again; sw_fs_proc_end frees r. */
    if (stopping(r->worker)) return;
    sw_delivery *d = sw_delivery_new(SW_DLV_FS, 0, (uint64_t)(uintptr_t)r, NULL, NULL, 0);
    if (d && !sw_proc_deliver(r->proc, d)) free(d); /* ending: sw_fs_proc_end frees r */
}

static void on_cancel(sw_task_wait *wait)
{
    sw_fs_req *r = (sw_fs_req *)((char *)wait - offsetof(sw_fs_req, wait));
    r->task = NULL; /* it finishes for nobody; the delivery frees it */
}

int sw_fs_submit(sw_fs_req *r, sw_task *t, sw_fs_finish finish)
{
    sw_proc *p = r->proc;
    sw_worker *w = sw_worker_current();
    sw_fs_owned *o = owned(p);
    int rc = !w || w != p->worker ? SW_FS_ETHREAD : !o ? UV_ENOMEM : 0;
    r->work.data = r;
    r->worker = w;
    if (rc == 0) rc = uv_queue_work(&w->loop, &r->work, on_work, on_done);
    if (rc != 0) {
        sw_fs_req_free(r);
        return rc;
    }
    r->task = t;
    r->finish = finish;
    r->wait.cancel = on_cancel;
    if (r->file) r->file->busy = r;
    r->next = o->reqs;
    if (o->reqs) o->reqs->prev = r;
    o->reqs = r;
    atomic_fetch_add(&p->pins, 1);
    return 0;
}

/* Out of the process's list (and its pin); r->proc stays set. */
static void unlink_req(sw_fs_owned *o, sw_fs_req *r)
{
    if (r->prev) r->prev->next = r->next;
    else o->reqs = r->next;
    if (r->next) r->next->prev = r->prev;
    r->next = r->prev = NULL;
    if (r->file) r->file->busy = NULL;
    atomic_fetch_sub(&r->proc->pins, 1);
}

void sw_fs_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    sw_fs_owned *o = p->fs;
    /* r is still p's: requests leave the list only here and at the process's end, when its
     * deliveries are dropped unhandled. */
    sw_fs_req *r = (sw_fs_req *)(uintptr_t)d->ref;
    sw_fs_req_free(o->finishing); /* an earlier finish raised */
    o->finishing = NULL;
    unlink_req(o, r);
    sw_task *t = r->task;
    if (!t) {
        if (r->file) r->file->busy = NULL;
        sw_fs_req_free(r);
        return;
    }
    r->task = NULL;
    o->finishing = r;
    int n = r->finish(r, L);
    o->finishing = NULL;
    sw_fs_req_free(r);
    sw_task_wake(t, L, n);
}

/* ---- files ---- */

sw_fs_file *sw_fs_file_new(sw_proc *p, int fd, bool readable, bool writable, int *err)
{
    sw_fs_owned *o = owned(p);
    if (o && o->n_files >= SW_FS_MAX_FILES) {
        *err = SW_FS_ELIMIT;
        return NULL;
    }
    sw_fs_file *f = o ? calloc(1, sizeof *f) : NULL;
    if (!f) {
        *err = -ENOMEM;
        return NULL;
    }
    f->proc = p;
    f->fd = fd;
    f->readable = readable;
    f->writable = writable;
    f->next = o->files;
    if (o->files) o->files->prev = f;
    o->files = f;
    o->n_files++;
    return f;
}

void sw_fs_file_bind(sw_fs_file *f, sw_fs_file **ref)
{
    f->ref = ref;
    *ref = f;
}

void sw_fs_file_drop_buffer(sw_fs_file *f) { f->start = f->end = 0; }

/* Out of the process's files; the fd is the caller's to close. */
static void unlink_file(sw_fs_file *f)
{
    sw_fs_owned *o = f->proc->fs;
    if (f->prev) f->prev->next = f->next;
    else o->files = f->next;
    if (f->next) f->next->prev = f->prev;
    o->n_files--;
    if (f->ref) *f->ref = NULL;
    f->proc = NULL;
    free(f->buf);
    free(f);
}

/* Closes fd with a job on the current worker's loop (nobody waits for it), else now. */
static void close_later(int fd)
{
    sw_worker *w = sw_worker_current();
    sw_fs_req *r = w && !stopping(w) ? sw_fs_req_new(NULL, SW_FS_OP_CLOSE) : NULL;
    if (r) {
        r->job.fd = fd;
        r->worker = w;
        r->work.data = r;
        if (uv_queue_work(&w->loop, &r->work, on_work, on_done) == 0) return;
        r->job.fd = -1;
        sw_fs_req_free(r);
    }
    close(fd);
}

void sw_fs_file_close(sw_fs_file *f)
{
    int fd = f->fd;
    sw_fs_req *busy = f->busy;
    if (busy) { /* its job still uses the fd (its task went away): the job closes it */
        busy->close_fd = fd;
        busy->file = NULL;
    }
    unlink_file(f);
    if (!busy) close_later(fd);
}

void sw_fs_proc_end(sw_proc *p)
{
    sw_fs_owned *o = p->fs;
    if (!o) return;
    sw_fs_req_free(o->finishing);
    while (o->files) {
        sw_fs_file_close(o->files);
    }
    while (o->reqs) {
        sw_fs_req *r = o->reqs;
        unlink_req(o, r);
        r->proc = NULL;
        r->task = NULL;
        if (r->done) sw_fs_req_free(r); /* finished while the runtime stopped */
        /* else in flight: on_done finishes it unowned */
    }
    free(o);
    p->fs = NULL;
}
