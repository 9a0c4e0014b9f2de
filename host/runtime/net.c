/* Process sockets on the worker's libuv loop (see net.h): the per-process table that owns
 * them (and pins the process), reading into a bounded buffer, writing through a bounded
 * queue, accepting, connecting, the IO deliveries that tell the process, the waits they
 * settle, and closing, also at the process's end and after the runtime stopped the loops. */
#include "net.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "mailbox.h"
#include "proc.h"
#include "worker.h"

#define READ_BUFFER_FIRST \
    (16 * 1024) /* a connection's buffer starts here, grows to SW_NET_READ_BUFFER */

struct sw_net_timer {
    uv_timer_t h; /* first: sw_workers_stop frees a timer it closes with free(h) */
    sw_sock *s;
    sw_net_side side;
};

typedef struct net_write {
    uv_write_t req;
    char data[];
} net_write;

struct sw_sock {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h; /* first: callbacks get the handle's address */
    uv_connect_t connect_req;
    sw_proc *proc;     /* the owner (a reference) while open; NULL once closed */
    uint64_t id;       /* generation << 32 | slot: what its IO deliveries carry */
    sw_sock **ref;     /* the Lua object's pointer to it, cleared at close */
    char *unlink_path; /* a unix listener's socket file, removed at close */
    bool is_unix, connecting, reading, pending, nudged, closing, closed;
    int connect_err, accept_err, read_end, write_err;
    unsigned writes; /* uv_write requests in flight */
    char *buf;       /* unread bytes: buf[start, end) */
    size_t start, end, cap;
    sw_net_wait wait[2];
};

static void free_handle(uv_handle_t *h) { free(h); }

/* ---- the process's table: slot by index, generation per slot ---- */

struct sw_net_owned {
    sw_sock **slot;
    uint32_t *gen;
    uint32_t cap, open, next;
};

size_t sw_net_count(const sw_proc *p) { return p->net ? p->net->open : 0; }

static int slot_add(sw_proc *p, sw_sock *s)
{
    sw_net_owned *o = p->net ? p->net : (p->net = calloc(1, sizeof *p->net));
    if (!o) return UV_ENOMEM;
    if (o->open >= SW_NET_MAX_SOCKETS) return SW_NET_ELIMIT;
    if (o->open == o->cap) {
        uint32_t cap = o->cap ? o->cap * 2 : 8;
        sw_sock **slot = realloc(o->slot, cap * sizeof *slot);
        if (slot) o->slot = slot;
        uint32_t *gen = slot ? realloc(o->gen, cap * sizeof *gen) : NULL;
        if (!gen) return UV_ENOMEM;
        o->gen = gen;
        memset(o->slot + o->cap, 0, (cap - o->cap) * sizeof *slot);
        memset(o->gen + o->cap, 0, (cap - o->cap) * sizeof *gen);
        o->next = o->cap;
        o->cap = cap;
    }
    uint32_t i = o->next % o->cap;
    while (o->slot[i]) i = (i + 1) % o->cap; /* open < cap: there is a free one */
    o->slot[i] = s;
    o->open++;
    o->next = i + 1;
    s->id = (uint64_t)o->gen[i] << 32 | i;
    s->proc = p;
    sw_proc_retain(p);
    atomic_fetch_add(&p->pins, 1);
    return 0;
}

static void slot_remove(sw_sock *s)
{
    sw_proc *p = s->proc;
    sw_net_owned *o = p->net;
    uint32_t i = (uint32_t)s->id;
    o->slot[i] = NULL;
    o->gen[i]++;
    o->open--;
    atomic_fetch_sub(&p->pins, 1);
    s->proc = NULL;
    sw_proc_release(p);
}

static sw_sock *slot_find(const sw_proc *p, uint64_t id)
{
    const sw_net_owned *o = p->net;
    uint32_t i = (uint32_t)id;
    if (!o || i >= o->cap || !o->slot[i] || o->slot[i]->id != id) return NULL;
    return o->slot[i];
}

/* ---- telling the process ---- */

/* Something happened: if a task waits on s and no delivery for s is in flight, send one. */
static void nudge(sw_sock *s)
{
    if (!s->proc || s->nudged || (!s->wait[SW_NET_IN].task && !s->wait[SW_NET_OUT].task)) return;
    sw_delivery *d = sw_delivery_new(SW_DLV_IO, 0, s->id, NULL, NULL, 0);
    if (!d) return;
    if (sw_proc_deliver(s->proc, d)) s->nudged = true;
    else free(d);
}

#ifndef NDEBUG
/* Pinning's promise, checked where process code reaches a socket (debug builds). */
static bool on_own_loop(const sw_sock *s)
{
    sw_worker *w = sw_worker_current();
    return w && &w->loop == s->h.handle.loop;
}
#endif

/* ---- waits ---- */

static bool loop_gone(const sw_sock *s)
{
    /* Open but closing: only sw_workers_stop does that (it closes every handle of a loop,
     * freeing timers); a socket the process closes leaves its table at once. */
    return s->proc && uv_is_closing(&s->h.handle);
}

static void disarm(sw_net_wait *w)
{
    w->task = NULL;
    w->timed_out = false;
    if (w->timer && !loop_gone(w->sock)) uv_timer_stop(&w->timer->h);
}

static void on_cancel(sw_task_wait *base) { disarm((sw_net_wait *)base); }

static void on_timeout(uv_timer_t *h)
{
    sw_net_timer *t = (sw_net_timer *)h;
    t->s->wait[t->side].timed_out = true;
    nudge(t->s);
}

sw_net_wait *sw_net_waiter(sw_sock *s, sw_net_side side) { return &s->wait[side]; }

void sw_net_arm(sw_net_wait *w, sw_task *t, int64_t timeout_ns)
{
    sw_sock *s = w->sock;
    assert(on_own_loop(s));
    w->task = t;
    w->timed_out = false;
    w->base.cancel = on_cancel;
    if (timeout_ns < 0) return;
    if (!w->timer) {
        w->timer = calloc(1, sizeof *w->timer);
        if (!w->timer) { /* cannot time it: give up at once */
            w->timed_out = true;
            nudge(s);
            return;
        }
        w->timer->s = s;
        w->timer->side = w == &s->wait[SW_NET_IN] ? SW_NET_IN : SW_NET_OUT;
        uv_timer_init(s->h.handle.loop, &w->timer->h);
    }
    /* As timer.c does: libuv counts whole ms from a cached, maybe coarse clock; add how far
     * it lags time.now()'s so a timeout never comes early. */
    uv_loop_t *loop = s->h.handle.loop;
    uv_update_time(loop);
    uint64_t hr = uv_hrtime(), cached = uv_now(loop) * 1000000;
    uint64_t lag = hr > cached ? hr - cached : 0;
    uv_timer_start(&w->timer->h, on_timeout, ((uint64_t)timeout_ns + lag + 999999) / 1000000, 0);
}

/* Runs the step of the side's waiting task; once it has results, the task resumes. */
static void settle(sw_sock *s, sw_net_side side, lua_State *L)
{
    sw_net_wait *w = &s->wait[side];
    if (!w->task) return;
    int n = w->step(w, L, w->timed_out);
    if (n < 0) return;
    sw_task *t = w->task;
    disarm(w);
    sw_task_wake(t, L, n);
    if (w->close_after) {
        w->close_after = false;
        sw_net_close(s, L);
    }
}

void sw_net_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    sw_sock *s = slot_find(p, d->ref);
    if (!s) return; /* closed meanwhile */
    s->nudged = false;
    settle(s, SW_NET_IN, L);
    settle(s, SW_NET_OUT, L);
}

/* ---- creating ---- */

static sw_sock *sock_new(sw_proc *p, bool is_unix, int *err)
{
    sw_worker *w = sw_worker_current();
    if (!w || w != p->worker) {
        *err = SW_NET_ETHREAD;
        return NULL;
    }
    if (sw_net_count(p) >= SW_NET_MAX_SOCKETS) {
        *err = SW_NET_ELIMIT;
        return NULL;
    }
    sw_sock *s = calloc(1, sizeof *s);
    if (!s) {
        *err = UV_ENOMEM;
        return NULL;
    }
    s->is_unix = is_unix;
    for (int i = 0; i < 2; i++) s->wait[i].sock = s;
    int rc = is_unix ? uv_pipe_init(&w->loop, &s->h.pipe, 0) : uv_tcp_init(&w->loop, &s->h.tcp);
    if (rc != 0) {
        free(s);
        *err = rc;
        return NULL;
    }
    rc = slot_add(p, s);
    if (rc != 0) {
        uv_close(&s->h.handle, free_handle);
        *err = rc;
        return NULL;
    }
    return s;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    sw_sock *s = (sw_sock *)h;
    (void)suggested;
    if (s->start && s->cap - s->end < READ_BUFFER_FIRST / 4) { /* slide the unread bytes down */
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->start = 0;
    }
    if (s->cap - s->end < READ_BUFFER_FIRST / 4 && s->cap < SW_NET_READ_BUFFER) {
        size_t cap = s->cap ? s->cap * 2 : READ_BUFFER_FIRST;
        char *buf = realloc(s->buf, cap > SW_NET_READ_BUFFER ? SW_NET_READ_BUFFER : cap);
        if (buf) {
            s->buf = buf;
            s->cap = cap > SW_NET_READ_BUFFER ? SW_NET_READ_BUFFER : cap;
        }
    }
    if (s->buf) *b = uv_buf_init(s->buf + s->end, (unsigned)(s->cap - s->end));
    else *b = uv_buf_init(NULL, 0); /* out of memory: on_read gets UV_ENOBUFS */
}

static void stop_reading(sw_sock *s)
{
    if (s->reading) uv_read_stop(&s->h.stream);
    s->reading = false;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    sw_sock *s = (sw_sock *)st;
    (void)b;
    if (n == 0) return; /* EAGAIN */
    if (n > 0) {
        s->end += (size_t)n;
        if (s->end - s->start >= SW_NET_READ_BUFFER) stop_reading(s); /* full: backpressure */
    } else {
        s->read_end = (int)n;
        stop_reading(s);
    }
    nudge(s);
}

static void start_reading(sw_sock *s)
{
    if (s->reading || s->read_end || s->closed || s->end - s->start >= SW_NET_READ_BUFFER) return;
    int rc = uv_read_start(&s->h.stream, on_alloc, on_read);
    if (rc) s->read_end = rc;
    else s->reading = true;
}

/* ---- listening and accepting ---- */

static void on_connection(uv_stream_t *server, int status)
{
    sw_sock *s = (sw_sock *)server;
    /* Not accepted here: libuv stops watching the listener until uv_accept takes this one,
     * so connections wait in the kernel's backlog until a task accepts them. */
    if (status < 0) s->accept_err = status;
    else s->pending = true;
    nudge(s);
}

/* A unix socket file nobody listens on (left by a host that was killed) is removed, so its
 * path can be bound again; never anything but a socket. Its connect is answered at once. */
static bool unlink_if_stale(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    struct stat st;
    if (n >= sizeof a.sun_path || lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
    memcpy(a.sun_path, path, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    bool stale = connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == ECONNREFUSED;
    close(fd);
    return stale && unlink(path) == 0;
}

sw_sock *sw_net_listen(sw_proc *p, const sw_net_addr *a, int *err)
{
    sw_sock *s = sock_new(p, a->is_unix, err);
    if (!s) return NULL;
    int rc = a->is_unix ? uv_pipe_bind(&s->h.pipe, a->path) : uv_tcp_bind(&s->h.tcp, &a->ip.sa, 0);
    if (rc == UV_EADDRINUSE && a->is_unix && unlink_if_stale(a->path))
        rc = uv_pipe_bind(&s->h.pipe, a->path);
    if (rc == 0 && a->is_unix) s->unlink_path = strdup(a->path); /* ours now: removed at close */
    if (rc == 0) rc = uv_listen(&s->h.stream, SW_NET_BACKLOG, on_connection);
    if (rc != 0) {
        *err = rc;
        sw_net_close(s, NULL);
        return NULL;
    }
    return s;
}

int sw_net_accept(sw_sock *l, sw_sock **out)
{
    *out = NULL;
    if (l->accept_err) {
        int e = l->accept_err;
        l->accept_err = 0;
        return e;
    }
    if (!l->pending) return 0;
    int err;
    sw_sock *c = sock_new(l->proc, l->is_unix, &err);
    if (!c) return err;
    l->pending = false;
    int rc = uv_accept(&l->h.stream, &c->h.stream);
    if (rc != 0) {
        sw_net_close(c, NULL);
        return rc == UV_EAGAIN ? 0 : rc;
    }
    if (!c->is_unix) uv_tcp_nodelay(&c->h.tcp, 1);
    start_reading(c);
    *out = c;
    return 0;
}

/* ---- connecting ---- */

static void on_connect(uv_connect_t *req, int status)
{
    sw_sock *s = (sw_sock *)req->handle;
    if (status == UV_ECANCELED) return; /* closed under way: whoever closed it answered */
    s->connecting = false;
    s->connect_err = status;
    if (status == 0 && !s->is_unix)
        uv_tcp_nodelay(&s->h.tcp, 1); /* each write goes out as it is made */
    if (status == 0) start_reading(s);
    nudge(s);
}

sw_sock *sw_net_connect(sw_proc *p, const sw_net_addr *a, int *err)
{
    sw_sock *s = sock_new(p, a->is_unix, err);
    if (!s) return NULL;
    s->connecting = true;
    int rc = 0;
    if (a->is_unix)
        uv_pipe_connect(&s->connect_req, &s->h.pipe, a->path, on_connect); /* errors: on_connect */
    else rc = uv_tcp_connect(&s->connect_req, &s->h.tcp, &a->ip.sa, on_connect);
    if (rc != 0) {
        *err = rc;
        sw_net_close(s, NULL);
        return NULL;
    }
    return s;
}

int sw_net_connected(sw_sock *s) { return s->connecting ? 0 : s->connect_err ? s->connect_err : 1; }

/* ---- reading ---- */

const char *sw_net_peek(sw_sock *s, size_t *len)
{
    assert(on_own_loop(s));
    *len = s->end - s->start;
    return s->buf ? s->buf + s->start : "";
}

void sw_net_consume(sw_sock *s, size_t n)
{
    s->start += n;
    if (s->start == s->end) s->start = s->end = 0;
    start_reading(s);
}

int sw_net_read_end(sw_sock *s) { return s->read_end; }

/* ---- writing ---- */

static void on_write(uv_write_t *req, int status)
{
    sw_sock *s = (sw_sock *)req->handle;
    free(req);
    s->writes--;
    if (status == UV_ECANCELED) return; /* closing */
    if (status < 0 && !s->write_err) s->write_err = status;
    nudge(s); /* a writer may wait for the queue to drain */
}

int sw_net_write(sw_sock *s, const char *data, size_t len)
{
    assert(on_own_loop(s));
    if (s->write_err) return s->write_err;
    if (len == 0) return 0;
    size_t done = 0;
    if (!s->h.stream.write_queue_size && !s->writes) { /* nothing queued: try at once, no copy */
        int r = uv_try_write(&s->h.stream, &(uv_buf_t){.base = (char *)data, .len = len}, 1);
        if (r < 0 && r != UV_EAGAIN) return s->write_err = r;
        done = r > 0 ? (size_t)r : 0;
        if (done == len) return 0;
    }
    net_write *w = malloc(sizeof *w + (len - done));
    if (!w) return UV_ENOMEM;
    memcpy(w->data, data + done, len - done);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)(len - done));
    int rc = uv_write(&w->req, &s->h.stream, &b, 1, on_write);
    if (rc != 0) {
        free(w);
        return s->write_err = rc;
    }
    s->writes++;
    return s->h.stream.write_queue_size > SW_NET_WRITE_QUEUE;
}

int sw_net_drained(sw_sock *s, bool all)
{
    if (s->write_err) return s->write_err;
    size_t q = s->h.stream.write_queue_size;
    return all ? q == 0 : q <= SW_NET_WRITE_QUEUE;
}

/* ---- names and state ---- */

int sw_net_name(sw_sock *s, bool peer, char *out, size_t len)
{
    if (s->is_unix) {
        char path[sizeof((sw_net_addr *)0)->path + 1];
        size_t n = sizeof path;
        int rc = peer ? uv_pipe_getpeername(&s->h.pipe, path, &n)
                      : uv_pipe_getsockname(&s->h.pipe, path, &n);
        if (rc == UV_ENOBUFS || (rc == 0 && n >= sizeof path)) n = 0;
        else if (rc != 0) return rc;
        snprintf(out, len, "unix://%.*s", (int)n, path);
        return 0;
    }
    struct sockaddr_storage ss;
    int n = sizeof ss;
    int rc = peer ? uv_tcp_getpeername(&s->h.tcp, (struct sockaddr *)&ss, &n)
                  : uv_tcp_getsockname(&s->h.tcp, (struct sockaddr *)&ss, &n);
    if (rc != 0) return rc;
    sw_net_addr_format((struct sockaddr *)&ss, out, len);
    return 0;
}

bool sw_net_is_unix(const sw_sock *s) { return s->is_unix; }
sw_proc *sw_net_owner(const sw_sock *s) { return s->proc; }
bool sw_net_usable(const sw_sock *s) { return !s->closed && !s->closing; }
bool sw_net_closed(const sw_sock *s) { return s->closed; }

void sw_net_bind(sw_sock *s, sw_sock **ref)
{
    s->ref = ref;
    *ref = s;
}

/* ---- closing ---- */

static void unbind(sw_sock *s)
{
    if (s->ref) *s->ref = NULL;
    s->ref = NULL;
}

void sw_net_close_begin(sw_sock *s, lua_State *L)
{
    unbind(s);
    s->closing = true;
    settle(s, SW_NET_IN, L); /* their steps see a socket that is no longer usable */
    settle(s, SW_NET_OUT, L);
}

static void on_closed(uv_handle_t *h)
{
    sw_sock *s = (sw_sock *)h;
    free(s->buf);
    free(s);
}

static void forget_path(sw_sock *s)
{
    if (s->unlink_path) unlink(s->unlink_path);
    free(s->unlink_path);
    s->unlink_path = NULL;
}

void sw_net_close(sw_sock *s, lua_State *L)
{
    if (s->closed) return;
    s->closing = s->closed = true;
    unbind(s);
    for (int i = 0; i < 2; i++) {
        if (L) settle(s, (sw_net_side)i, L); /* steps see the socket closed */
        if (s->wait[i].task) disarm(&s->wait[i]);
    }
    slot_remove(s);
    for (int i = 0; i < 2; i++) {
        if (s->wait[i].timer) uv_close((uv_handle_t *)&s->wait[i].timer->h, free_handle);
        s->wait[i].timer = NULL;
    }
    forget_path(s);
    uv_close(&s->h.handle, on_closed); /* closes the fd now; queued writes end as ECANCELED */
}

void sw_net_proc_end(sw_proc *p)
{
    sw_net_owned *o = p->net;
    if (!o) return;
    for (uint32_t i = 0; i < o->cap; i++) {
        sw_sock *s = o->slot[i];
        if (!s) continue;
        if (!loop_gone(s)) {
            sw_net_close(s, NULL);
            continue;
        }
        /* The runtime stopped: sw_workers_stop closed the handle (and freed the timers);
         * nothing of libuv is left to call. */
        unbind(s);
        forget_path(s);
        slot_remove(s);
        free(s->buf);
        free(s);
    }
    free(o->slot);
    free(o->gen);
    free(o);
    p->net = NULL;
}
