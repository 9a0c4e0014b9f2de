/* Process commands on the worker's loop (see exec.h): starting a child in its own process
 * group with pipes, reading its output into bounded buffers, writing its stdin through a
 * bounded queue, its exit and timeout, the deliveries that tell the process, and letting go
 * (the group killed; the child reaped later, unowned). */
#include "exec.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "mailbox.h"
#include "proc.h"
#include "worker.h"

#define BUFFER_FIRST (16 * 1024)

typedef struct exec_timer {
    uv_timer_t h; /* first: sw_workers_stop frees a timer it closes with free(h) */
    sw_child *c;
} exec_timer;

typedef struct out_stream {
    char *buf; /* unread bytes: buf[start, end) */
    size_t start, end, cap;
    int end_err; /* UV_EOF or a read error once it ended */
    bool reading;
} out_stream;

typedef struct exec_write {
    uv_write_t req;
    size_t len;
    char data[];
} exec_write;

struct sw_child {
    uv_process_t proc; /* first */
    uv_pipe_t pipe[3]; /* stdin, stdout, stderr */
    bool open[3];      /* the pipe is open (not closed, not closing) */
    bool proc_open;    /* the process handle is open: not reaped yet */
    int closing;       /* handles whose close callback is still due */
    exec_timer *timer;
    sw_worker *worker;
    sw_proc *owner; /* NULL once let go */
    uint64_t id;
    sw_child **ref;
    int pid;
    bool exited, timed_out, overflow, no_memory, nudged, in_dispatch, close_stdin;
    sw_vm_budget *budget; /* exec.run's output is taken from it */
    size_t taken;
    int64_t code;
    int signal;
    out_stream out[2];
    size_t max_output;
    unsigned writes;
    size_t queued;
    int write_err;
    sw_exec_wait wait[4];
    sw_child *next, *prev;
};

struct sw_exec_owned {
    sw_child *list;
    size_t n;
    uint64_t next_id;
};

/* ---- freeing: once let go and every handle is closed ---- */

static void free_child(sw_child *c)
{
    if (c->taken) sw_vm_budget_give(c->budget, c->taken);
    free(c->out[0].buf);
    free(c->out[1].buf);
    free(c);
}

static void maybe_free(sw_child *c)
{
    if (c->owner || c->in_dispatch || c->proc_open || c->closing || c->timer) return;
    for (int i = 0; i < 3; i++)
        if (c->open[i]) return;
    free_child(c);
}

static void on_closed(uv_handle_t *h)
{
    sw_child *c = h->data;
    c->closing--;
    maybe_free(c);
}

static void close_pipe(sw_child *c, int i)
{
    if (!c->open[i]) return;
    c->open[i] = false;
    if (i > 0) c->out[i - 1].reading = false;
    c->closing++;
    uv_close((uv_handle_t *)&c->pipe[i], on_closed);
}

static void free_timer(uv_handle_t *h) { free(h); }

static void close_timer(sw_child *c)
{
    if (!c->timer) return;
    uv_close((uv_handle_t *)&c->timer->h, free_timer);
    c->timer = NULL;
}

/* Signals the command's process group (its own: UV_PROCESS_DETACHED made it a session). */
static int kill_group(sw_child *c, int sig) { return kill(-c->pid, sig) == 0 ? 0 : -errno; }

/* ---- telling the owner ---- */

static void nudge(sw_child *c)
{
    if (!c->owner || c->nudged) return;
    bool waiting = false;
    for (int i = 0; i < 4; i++) waiting |= c->wait[i].task != NULL;
    if (!waiting) return;
    sw_delivery *d = sw_delivery_new(SW_DLV_EXEC, 0, c->id, NULL, NULL, 0);
    if (!d) return;
    if (sw_proc_deliver(c->owner, d)) c->nudged = true;
    else free(d);
}

/* ---- output ---- */

static int stream_index(const sw_child *c, const uv_handle_t *h)
{
    return h == (const uv_handle_t *)&c->pipe[1] ? 0 : 1;
}

static size_t stream_cap(const sw_child *c)
{
    return c->max_output ? c->max_output + 1 : SW_EXEC_PIPE_BUFFER; /* +1: sees an overflow */
}

/* exec.run's output from the host's budget; when it has no room the group is killed. */
static bool take(sw_child *c, size_t n)
{
    if (sw_vm_budget_take(c->budget, n, false)) {
        c->taken += n;
        return true;
    }
    c->no_memory = true;
    kill_group(c, SIGKILL);
    return false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    sw_child *c = h->data;
    out_stream *s = &c->out[stream_index(c, h)];
    size_t max = stream_cap(c);
    (void)suggested;
    if (s->start && s->cap - s->end < BUFFER_FIRST / 4) { /* slide the unread bytes down */
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->start = 0;
    }
    if (s->cap - s->end < BUFFER_FIRST / 4 && s->cap < max && !c->no_memory) {
        size_t cap = s->cap ? s->cap * 2 : BUFFER_FIRST;
        if (cap > max) cap = max;
        if (c->budget && !take(c, cap - s->cap)) {
            *b = uv_buf_init(NULL, 0); /* on_read: UV_ENOBUFS */
            return;
        }
        char *buf = realloc(s->buf, cap);
        if (buf) {
            s->buf = buf;
            s->cap = cap;
        }
    }
    *b = s->buf ? uv_buf_init(s->buf + s->end, (unsigned)(s->cap - s->end)) : uv_buf_init(NULL, 0);
}

static void stop_reading(sw_child *c, int i)
{
    out_stream *s = &c->out[i];
    if (s->reading) uv_read_stop((uv_stream_t *)&c->pipe[i + 1]);
    s->reading = false;
}

static void end_stream(sw_child *c, int i, int err)
{
    if (!c->out[i].end_err) c->out[i].end_err = err;
    stop_reading(c, i);
    close_pipe(c, i + 1);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    sw_child *c = st->data;
    int i = stream_index(c, (uv_handle_t *)st);
    out_stream *s = &c->out[i];
    (void)b;
    if (n == 0) return;
    if (n < 0) {
        end_stream(c, i, (int)n);
    } else {
        s->end += (size_t)n;
        if (c->max_output && s->end - s->start > c->max_output) { /* exec.run's cap */
            c->overflow = true;
            kill_group(c, SIGKILL);
            end_stream(c, 0, UV_EOF);
            end_stream(c, 1, UV_EOF);
        } else if (!c->max_output && s->end - s->start >= SW_EXEC_PIPE_BUFFER) {
            stop_reading(c, i); /* full: the command's writes wait (backpressure) */
        }
    }
    nudge(c);
}

static void start_reading(sw_child *c, int i)
{
    out_stream *s = &c->out[i];
    if (s->reading || s->end_err || !c->open[i + 1]) return;
    if (!c->max_output && s->end - s->start >= SW_EXEC_PIPE_BUFFER) return;
    int rc = uv_read_start((uv_stream_t *)&c->pipe[i + 1], on_alloc, on_read);
    if (rc) end_stream(c, i, rc);
    else s->reading = true;
}

const char *sw_exec_peek(sw_child *c, sw_exec_stream s, size_t *len)
{
    out_stream *o = &c->out[s];
    *len = o->end - o->start;
    return o->buf ? o->buf + o->start : "";
}

void sw_exec_consume(sw_child *c, sw_exec_stream s, size_t n)
{
    out_stream *o = &c->out[s];
    o->start += n;
    if (o->start == o->end) o->start = o->end = 0;
    start_reading(c, (int)s);
}

int sw_exec_stream_end(const sw_child *c, sw_exec_stream s) { return c->out[s].end_err; }

/* ---- exit and timeout ---- */

static void on_timer(uv_timer_t *h)
{
    sw_child *c = ((exec_timer *)h)->c;
    if (!c->exited) { /* the timeout: the whole group goes; the exit follows */
        c->timed_out = true;
        kill_group(c, SIGKILL);
        return;
    }
    for (int i = 0; i < 2; i++) /* the drain after the exit is over */
        if (!c->out[i].end_err) end_stream(c, i, UV_EOF);
    nudge(c);
}

static void on_child_exit(uv_process_t *h, int64_t status, int sig)
{
    sw_child *c = h->data;
    c->exited = true;
    c->code = status;
    c->signal = sig;
    kill_group(c, SIGKILL); /* whatever it left running in its group */
    c->proc_open = false;
    c->closing++;
    uv_close((uv_handle_t *)h, on_closed);
    if (!c->owner) return; /* let go before: freed once the handles are closed */
    bool draining = !c->out[0].end_err || !c->out[1].end_err;
    if (draining && c->timer) uv_timer_start(&c->timer->h, on_timer, SW_EXEC_DRAIN_MS, 0);
    else if (c->timer) uv_timer_stop(&c->timer->h);
    nudge(c);
}

/* ---- starting ---- */

static sw_exec_owned *owned(sw_proc *p)
{
    return p->exec ? p->exec : (p->exec = calloc(1, sizeof *p->exec));
}

static int check_start(sw_proc *p, sw_worker *w)
{
    if (!w || w != p->worker) return SW_EXEC_ETHREAD;
    sw_exec_owned *o = owned(p);
    if (!o) return UV_ENOMEM;
    return o->n >= SW_EXEC_MAX_CHILDREN ? SW_EXEC_ELIMIT : 0;
}

static void adopt(sw_proc *p, sw_child *c)
{
    sw_exec_owned *o = p->exec;
    c->owner = p;
    c->id = ++o->next_id;
    c->next = o->list;
    if (o->list) o->list->prev = c;
    o->list = c;
    o->n++;
    atomic_fetch_add(&p->pins, 1);
}

static int arm_timeout(sw_child *c, int64_t timeout_ns)
{
    c->timer = malloc(sizeof *c->timer);
    if (!c->timer) return UV_ENOMEM;
    c->timer->c = c;
    uv_timer_init(&c->worker->loop, &c->timer->h);
    if (timeout_ns >= 0)
        uv_timer_start(&c->timer->h, on_timer, ((uint64_t)timeout_ns + 999999) / 1000000, 0);
    return 0;
}

sw_child *sw_exec_start(sw_proc *p, const sw_exec_opts *o, int *err)
{
    sw_worker *w = sw_worker_current();
    sw_child *c = NULL;
    int rc = check_start(p, w);
    if (rc == 0 && !(c = calloc(1, sizeof *c))) rc = UV_ENOMEM;
    if (rc != 0) {
        *err = rc;
        return NULL;
    }
    c->worker = w;
    c->max_output = o->max_output;
    c->budget = o->max_output ? o->budget : NULL;
    for (int i = 0; i < 4; i++) c->wait[i].child = c;
    uv_stdio_container_t stdio[3];
    for (int i = 0; i < 3; i++) {
        if (i == 0 && o->no_stdin) {
            stdio[0].flags = UV_IGNORE;
            continue;
        }
        uv_pipe_init(&w->loop, &c->pipe[i], 0);
        c->pipe[i].data = c;
        c->open[i] = true;
        stdio[i].flags = UV_CREATE_PIPE | (i == 0 ? UV_READABLE_PIPE : UV_WRITABLE_PIPE);
        stdio[i].data.stream = (uv_stream_t *)&c->pipe[i];
    }
    uv_process_options_t po = {.exit_cb = on_child_exit,
                               .file = o->file,
                               .args = o->argv,
                               .env = o->env,
                               .cwd = o->cwd,
                               .flags = UV_PROCESS_DETACHED,
                               .stdio_count = 3,
                               .stdio = stdio};
    c->proc.data = c;
    rc = uv_spawn(&w->loop, &c->proc, &po);
    c->proc_open = true; /* closed even when the spawn failed (libuv's rule) */
    if (rc == 0) rc = arm_timeout(c, o->timeout_ns);
    if (rc != 0) {
        if (c->pid) kill_group(c, SIGKILL);
        c->proc_open = false;
        c->closing++;
        uv_close((uv_handle_t *)&c->proc, on_closed);
        for (int i = 0; i < 3; i++) close_pipe(c, i);
        *err = rc;
        return NULL;
    }
    c->pid = c->proc.pid;
    adopt(p, c);
    start_reading(c, 0);
    start_reading(c, 1);
    return c;
}

/* ---- stdin ---- */

static void on_write(uv_write_t *req, int status)
{
    exec_write *w = (exec_write *)req;
    sw_child *c = req->handle->data;
    c->writes--;
    c->queued -= w->len;
    free(w);
    if (status < 0 && status != UV_ECANCELED && !c->write_err) c->write_err = status;
    if (c->close_stdin && !c->writes) close_pipe(c, 0);
    nudge(c);
}

int sw_exec_write(sw_child *c, const char *data, size_t len)
{
    if (c->write_err) return c->write_err;
    if (!c->open[0] || c->close_stdin) return UV_EPIPE;
    if (len == 0) return 0;
    exec_write *w = malloc(sizeof *w + len);
    if (!w) return UV_ENOMEM;
    w->len = len;
    memcpy(w->data, data, len);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    int rc = uv_write(&w->req, (uv_stream_t *)&c->pipe[0], &b, 1, on_write);
    if (rc != 0) {
        free(w);
        return c->write_err = rc;
    }
    c->writes++;
    c->queued += len;
    return c->queued > SW_EXEC_PIPE_BUFFER;
}

int sw_exec_drained(const sw_child *c)
{
    if (c->write_err) return c->write_err;
    return c->queued <= SW_EXEC_PIPE_BUFFER || !c->open[0];
}

void sw_exec_close_stdin(sw_child *c)
{
    if (!c->open[0]) return;
    c->close_stdin = true;
    if (!c->writes) close_pipe(c, 0);
}

/* ---- state ---- */

int sw_exec_pid(const sw_child *c) { return c->pid; }
bool sw_exec_timed_out(const sw_child *c) { return c->timed_out; }
bool sw_exec_overflowed(const sw_child *c) { return c->overflow; }
bool sw_exec_out_of_memory(const sw_child *c) { return c->no_memory; }
sw_proc *sw_exec_owner(const sw_child *c) { return c->owner; }

bool sw_exec_exited(const sw_child *c, int64_t *code, int *signal)
{
    *code = c->code;
    *signal = c->signal;
    return c->exited;
}

int sw_exec_kill(sw_child *c, int sig) { return c->exited ? UV_ESRCH : kill_group(c, sig); }

void sw_exec_bind(sw_child *c, sw_child **ref)
{
    c->ref = ref;
    *ref = c;
}

/* ---- waits ---- */

static void on_cancel(sw_task_wait *base) { ((sw_exec_wait *)base)->task = NULL; }

sw_exec_wait *sw_exec_waiter(sw_child *c, sw_exec_side side) { return &c->wait[side]; }

void sw_exec_arm(sw_exec_wait *w, sw_task *t, sw_exec_step step)
{
    w->task = t;
    w->step = step;
    w->base.cancel = on_cancel;
}

static sw_child *find(const sw_proc *p, uint64_t id)
{
    for (sw_child *c = p->exec ? p->exec->list : NULL; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

void sw_exec_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    sw_child *c = find(p, d->ref);
    if (!c) return; /* let go meanwhile */
    c->nudged = false;
    c->in_dispatch = true; /* a step may let it go: it is freed after the loop */
    for (int i = 0; i < 4; i++) {
        sw_exec_wait *w = &c->wait[i];
        sw_task *t = w->task;
        if (!t) continue;
        int n = w->step(w, L); /* it may let c go (exec.run done): t is still its task */
        if (n < 0) continue;
        w->task = NULL;
        sw_task_wake(t, L, n);
    }
    c->in_dispatch = false;
    maybe_free(c);
}

/* ---- letting go ---- */

static void unlink_child(sw_child *c)
{
    sw_exec_owned *o = c->owner->exec;
    if (c->prev) c->prev->next = c->next;
    else o->list = c->next;
    if (c->next) c->next->prev = c->prev;
    c->next = c->prev = NULL;
    o->n--;
    atomic_fetch_sub(&c->owner->pins, 1);
    c->owner = NULL;
    if (c->ref) *c->ref = NULL;
    c->ref = NULL;
    for (int i = 0; i < 4; i++) c->wait[i].task = NULL;
}

void sw_exec_release(sw_child *c)
{
    if (!c->owner) return;
    if (!c->exited) kill_group(c, SIGKILL);
    unlink_child(c);
    if (sw_worker_current() != c->worker) {
        /* Only once the runtime stopped (an owner is pinned to c's worker): sw_workers_stop
         * closed the handles and freed the timer; nothing of libuv is left to call. */
        free_child(c);
        return;
    }
    for (int i = 0; i < 3; i++) close_pipe(c, i);
    close_timer(c);
    maybe_free(c); /* else once reaped and closed */
}

void sw_exec_proc_end(sw_proc *p)
{
    sw_exec_owned *o = p->exec;
    if (!o) return;
    while (o->list) sw_exec_release(o->list);
    free(o);
    p->exec = NULL;
}

static void close_unowned(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (h->type != UV_PROCESS || uv_is_closing(h)) return;
    sw_child *c = h->data;
    if (c->owner) return; /* its process frees it (sw_exec_proc_end) */
    c->proc_open = false;
    c->closing++;
    uv_close(h, on_closed);
}

void sw_exec_worker_stop(sw_worker *w) { uv_walk(&w->loop, close_unowned, NULL); }
