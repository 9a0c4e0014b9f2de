/* The control socket's transport (see control.h): the listening pipe, one record per client
 * connection, line framing with a length cap, peer-credential checks, and replies (JSON values
 * from control_ops.c, written as lines by json.h) in request order; the limits on clients
 * (reply queue, idle and request timeouts, connection count) and the shared status document;
 * `logs` followers, fed from the log's rings on a wake-up of the loop. What a request does is
 * control_ops.c's business. */
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control_logs.h"
#include "control_path.h"
#include "control_ops.h"
#include "control_request.h"
#include "control_status.h"
#include "json.h"
#include "wake.h"

typedef struct ctl_conn ctl_conn;

/* Bytes kept aside. */
typedef struct backlog {
    char *p;
    size_t len, cap;
} backlog;

/* A reply's text, shared by the writes that send it (one status document goes to many). */
typedef struct reply_text {
    size_t refs, len;
    char p[];
} reply_text;

/* One write of a reply to one client. */
typedef struct ctl_write {
    uv_write_t req;
    ctl_conn *k;
    reply_text *text;
} ctl_write;

struct sw_control {
    uv_pipe_t server;
    sw_supervisor *sup;
    char *path;
    dev_t dev;
    ino_t ino;
    uint64_t start;
    uint64_t idle_ms, request_ms; /* the limits, in the loop's milliseconds */
    ctl_conn *conns;
    size_t n_conns;
    int open_handles;    /* handles not yet closed (for sw_control_close) */
    reply_text *status;  /* the status of every service, shared until a change (or its age) */
    sw_log_ring *ring;   /* the log's rings (NULL: none kept) */
    sw_wake feed;        /* the rings' feed has records for the followers */
    uint64_t status_at;  /* uv_now when it was built */
    char readbuf[65536]; /* reads are handled one at a time on the loop: one buffer serves all */
};

struct ctl_conn {
    uv_pipe_t pipe;
    uv_timer_t timer; /* a pending request's deadline; else the idle and request timeouts */
    int handles;      /* of pipe and timer, not yet closed */
    sw_control *ctl;
    ctl_conn *next, **link;
    char line[SW_CTL_MAX_LINE + 1];
    size_t len;
    bool discarding; /* inside an oversized line: skip to its newline */
    bool eof, closing, finishing;
    bool pending;       /* a start/stop/restart waits for its outcome: answered when the
                                supervisor tells of a change (on_change) or at its deadline */
    bool paused;        /* not read while SW_CTL_QUEUE_LOW bytes of replies wait */
    size_t queued;      /* bytes of replies handed to uv_write, not yet written */
    uint64_t active_at; /* uv_now of the last progress: accepted, a request, a reply written */
    uint64_t line_at;   /* uv_now of the first byte of an unfinished line; 0: none */
    sw_ctl_op op;
    backlog backlog;       /* bytes read after a pending request's line, or while paused */
    sw_ctl_follow *follow; /* a logs follower: sent new records until it closes; reads no more */
};

static uint64_t now_ms(const sw_control *c) { return uv_now(c->sup->loop); }

/* ---- closing ---- */

static void on_handle_closed(uv_handle_t *h)
{
    sw_control *c = h->data;
    c->open_handles--;
}

static void on_conn_closed(uv_handle_t *h)
{
    ctl_conn *k = h->data;
    k->ctl->open_handles--;
    if (--k->handles) return;
    sw_ctl_op_free(&k->op);
    sw_ctl_follow_free(k->ctl->ring, k->follow);
    free(k->backlog.p);
    free(k);
}

/* Closes at once; replies not yet written are dropped (their writes end with ECANCELED before
 * k is freed). */
static void close_conn(ctl_conn *k)
{
    if (k->closing) return;
    k->closing = true;
    *k->link = k->next;
    if (k->next) k->next->link = k->link;
    k->ctl->n_conns--;
    uv_close((uv_handle_t *)&k->pipe, on_conn_closed);
    uv_close((uv_handle_t *)&k->timer, on_conn_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    close_conn(req->data);
    free(req);
}

/* After the client's end of input: close once what was written has gone out. */
static void finish_conn(ctl_conn *k)
{
    if (k->closing || k->finishing) return;
    k->finishing = true;
    uv_shutdown_t *req = malloc(sizeof *req);
    if (!req || uv_shutdown(req, (uv_stream_t *)&k->pipe, on_shutdown) != 0) {
        free(req);
        close_conn(k);
        return;
    }
    req->data = k;
}

/* Closes k for a reason, logged as a warning; tell: first try to write the reason to it as an
 * error reply, if nothing else waits to be written (never waiting for it). */
static void drop(ctl_conn *k, const char *why, bool tell)
{
    sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = why};
    sw_log_write(k->ctl->sup->log, SW_LOG_WARN, NULL, "control connection dropped", &f, 1);
    json_t *reply = tell && k->queued == 0 ? sw_ctl_error_reply(why) : NULL;
    size_t len;
    char *text = reply ? sw_json_dump(reply, true, &len) : NULL;
    json_decref(reply);
    if (text) {
        uv_buf_t buf = uv_buf_init(text, (unsigned)len);
        (void)uv_try_write((uv_stream_t *)&k->pipe, &buf, 1); /* best effort */
        free(text);
    }
    close_conn(k);
}

/* ---- replies ---- */

static void text_release(reply_text *t)
{
    if (t && --t->refs == 0) free(t);
}

/* reply (released) as one line of text; NULL when it is NULL or memory runs out. */
static reply_text *text_of(json_t *reply)
{
    size_t len;
    char *s = sw_json_dump(reply, true, &len);
    json_decref(reply);
    reply_text *t = s ? malloc(sizeof *t + len) : NULL;
    if (t) {
        t->refs = 1;
        t->len = len;
        memcpy(t->p, s, len);
    }
    free(s);
    return t;
}

static void resume(ctl_conn *k);
static void arm_timer(ctl_conn *k);
static void follow_caught_up(ctl_conn *k);

static bool blocked(const ctl_conn *k) { return k->pending || k->queued >= SW_CTL_QUEUE_LOW; }

static void on_written(uv_write_t *req, int status)
{
    ctl_write *w = (ctl_write *)req;
    ctl_conn *k = w->k;
    k->queued -= w->text->len;
    text_release(w->text);
    free(w);
    if (status != 0 || k->closing) return; /* a client that went away: nothing to tell */
    k->active_at = now_ms(k->ctl);
    if (k->follow) follow_caught_up(k);
    else if (k->paused && !blocked(k)) resume(k);
    else arm_timer(k);
}

/* Writes t (a reference is taken) to k. A client with replies waiting that would pass
 * SW_CTL_QUEUE_MAX is dropped instead. */
static void send_text(ctl_conn *k, reply_text *t)
{
    if (k->closing) return;
    if (k->queued > 0 && k->queued + t->len > SW_CTL_QUEUE_MAX) {
        char why[200];
        snprintf(why, sizeof why, "replies not read: %zu bytes would wait (at most %zu)",
                 k->queued + t->len, SW_CTL_QUEUE_MAX);
        drop(k, why, false);
        return;
    }
    ctl_write *w = malloc(sizeof *w);
    if (!w) {
        drop(k, "out of memory", false);
        return;
    }
    w->k = k;
    w->text = t;
    t->refs++;
    uv_buf_t buf = uv_buf_init(t->p, (unsigned)t->len);
    if (uv_write(&w->req, (uv_stream_t *)&k->pipe, &buf, 1, on_written) != 0) {
        text_release(t);
        free(w);
        close_conn(k);
        return;
    }
    k->queued += t->len;
}

/* Sends the reply as one line and releases it. A reply that could not be built (NULL: memory
 * ran out) is replaced by an "out of memory" error, if that can be. */
static void send_reply(ctl_conn *k, json_t *reply)
{
    reply_text *t = text_of(reply);
    if (!t) t = text_of(sw_ctl_error_reply("out of memory"));
    if (t) send_text(k, t);
    text_release(t);
}

static void send_error(ctl_conn *k, const char *msg) { send_reply(k, sw_ctl_error_reply(msg)); }

/* Sends n bytes of whole lines (p is freed). */
static void send_lines(ctl_conn *k, char *p, size_t n)
{
    reply_text *t = p && n ? malloc(sizeof *t + n) : NULL;
    if (t) {
        t->refs = 1;
        t->len = n;
        memcpy(t->p, p, n);
        send_text(k, t);
        text_release(t);
    }
    free(p);
}

/* ---- logs and followers ---- */

/* A logs request: the reply from the rings; a follower reads no more requests, and has no
 * idle timeout (it waits for lines). */
static void answer_logs(ctl_conn *k)
{
    sw_control *c = k->ctl;
    if (!c->ring) {
        send_error(k, "this host keeps no log lines (log.ring_lines is 0)");
        return;
    }
    char *text;
    size_t len;
    if (sw_ctl_logs_read(c->ring, &k->op.req, &text, &len, &k->follow) != 0) {
        send_error(k, "out of memory");
        return;
    }
    send_lines(k, text, len);
    if (k->follow) uv_timer_stop(&k->timer);
}

/* Bytes of lines that may still wait for follower k. */
static size_t follow_room(const ctl_conn *k)
{
    return k->queued < SW_CTL_FOLLOW_QUEUE ? SW_CTL_FOLLOW_QUEUE - k->queued : 0;
}

/* A follower's lines were written: tell it of the lines it lost, if any. */
static void follow_caught_up(ctl_conn *k)
{
    if (!k->follow->dropped || k->queued > SW_CTL_FOLLOW_QUEUE / 2) return;
    char *text;
    size_t len;
    sw_ctl_follow_batch(k->follow, NULL, 0, follow_room(k), &text, &len);
    send_lines(k, text, len);
}

/* The rings' feed has records: each follower gets those it wants, as far as its queue allows. */
static void on_feed(sw_wake *w)
{
    sw_control *c = w->data;
    uint64_t lost;
    sw_log_rec *list = sw_log_ring_take_feed(c->ring, &lost);
    for (ctl_conn *k = c->conns, *next; k; k = next) {
        next = k->next;
        if (!k->follow || k->closing) continue;
        char *text;
        size_t len;
        sw_ctl_follow_batch(k->follow, list, lost, follow_room(k), &text, &len);
        send_lines(k, text, len);
    }
    for (sw_log_rec *r = list, *next; r; r = next) {
        next = r->feed_next;
        sw_log_rec_release(r);
    }
}

static void wake_feed(void *arg) { sw_wake_send(arg); }

static void on_feed_closed(uv_handle_t *h)
{
    sw_wake *w = h->data;
    sw_control *c = w->data;
    c->open_handles--;
}

static void forget_status(sw_control *c)
{
    text_release(c->status);
    c->status = NULL;
}

/* The status document of every service: built at most once per supervisor change, and again
 * when older than SW_CTL_STATUS_MAX_AGE_MS (its uptimes move on). NULL when memory runs out. */
static reply_text *status_text(sw_control *c)
{
    uint64_t now = now_ms(c);
    if (c->status && now - c->status_at < SW_CTL_STATUS_MAX_AGE_MS) return c->status;
    forget_status(c);
    c->status = text_of(sw_ctl_status_all(c->sup, c->start));
    c->status_at = now;
    return c->status;
}

/* ---- requests ---- */

static void feed(ctl_conn *k, const char *p, size_t n);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

static void handle_line(ctl_conn *k)
{
    size_t n = k->len;
    k->len = 0;
    while (n && (k->line[n - 1] == '\r' || k->line[n - 1] == ' ')) n--;
    if (n == 0) return; /* blank lines are ignored */
    k->active_at = now_ms(k->ctl);
    json_t *reply;
    sw_ctl_op_free(&k->op);
    switch (sw_ctl_op_begin(&k->op, k->ctl->sup, k->line, n, &reply)) {
    case SW_CTL_STATUS_ALL: {
        reply_text *t = status_text(k->ctl);
        if (t) send_text(k, t);
        else send_error(k, "out of memory");
        return;
    }
    case SW_CTL_ANSWERED: send_reply(k, reply); return;
    case SW_CTL_LOGS_READ: answer_logs(k); return;
    case SW_CTL_WAITING:
        k->pending =
            true; /* the reply comes with a change or at the deadline; read no more until then */
        uv_read_stop((uv_stream_t *)&k->pipe);
        arm_timer(k);
        return;
    }
}

/* Adds bytes to the backlog; a client whose bytes cannot be kept is closed. */
static void keep(ctl_conn *k, const char *p, size_t n)
{
    backlog *b = &k->backlog;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            drop(k, "out of memory", false);
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Stops reading k while it waits for a pending outcome or for its replies to be read. */
static void pause_reading(ctl_conn *k)
{
    uv_read_stop((uv_stream_t *)&k->pipe);
    if (!k->pending) k->paused = true;
}

/* Splits bytes into lines; stops at a pending request or a full reply queue and keeps the
 * rest for later (at most one read's worth: reading stops then). */
static void feed(ctl_conn *k, const char *p, size_t n)
{
    while (n && !k->closing && !k->follow) {
        if (blocked(k)) {
            pause_reading(k);
            keep(k, p, n);
            return;
        }
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (k->discarding) {
            k->discarding = !nl;
        } else if (k->len + take > SW_CTL_MAX_LINE) {
            send_error(k, "request too long (more than 4096 bytes): ignored");
            k->len = 0;
            k->discarding = !nl;
        } else {
            memcpy(k->line + k->len, p, take);
            k->len += take;
            if (nl) handle_line(k);
        }
        if (nl) k->line_at = 0;
        else if (!k->line_at)
            k->line_at = now_ms(k->ctl); /* a line begun: the request timeout runs */
        p += take + (nl ? 1 : 0);
        n -= take + (nl ? 1 : 0);
    }
}

/* A pending request got its reply, or the replies drained: go on with what the client sent
 * after. */
static void resume(ctl_conn *k)
{
    k->paused = false;
    backlog rest = k->backlog;
    k->backlog = (backlog){0};
    feed(k, rest.p, rest.len);
    free(rest.p);
    if (k->closing) return;
    if (blocked(k)) pause_reading(k);
    else if (k->eof) finish_conn(k);
    else uv_read_start((uv_stream_t *)&k->pipe, on_alloc, on_read);
    arm_timer(k);
}

/* Answers k's pending request if its services settled or its deadline passed. */
static bool try_answer(ctl_conn *k)
{
    json_t *reply;
    if (!sw_ctl_op_poll(&k->op, k->ctl->sup, &reply)) return false;
    uv_timer_stop(&k->timer);
    k->pending = false;
    k->active_at = now_ms(k->ctl);
    send_reply(k, reply);
    resume(k);
    return true;
}

/* The supervisor's change subscriber: called at the end of an entry point that changed a
 * service or group. A request made from here (resume reads the next line) is told of by a
 * further call. */
static void on_change(void *arg)
{
    sw_control *c = arg;
    forget_status(c);
    for (ctl_conn *k = c->conns, *next; k; k = next) {
        next = k->next;
        if (k->pending) try_answer(k);
    }
}

/* Closes k if it has been idle, or its request unfinished, too long; true if it did. */
static bool timed_out(ctl_conn *k)
{
    sw_control *c = k->ctl;
    uint64_t now = now_ms(c);
    char why[200];
    if (k->line_at && now - k->line_at >= c->request_ms) {
        snprintf(why, sizeof why, "request not finished within %gs", (double)c->request_ms / 1000);
        drop(k, why, true);
        return true;
    }
    if (now - k->active_at < c->idle_ms) return false;
    if (k->queued)
        snprintf(why, sizeof why, "replies not read for %gs (%zu bytes waiting)",
                 (double)c->idle_ms / 1000, k->queued);
    else snprintf(why, sizeof why, "idle for %gs", (double)c->idle_ms / 1000);
    drop(k, why, k->queued == 0);
    return true;
}

static void on_timer(uv_timer_t *t)
{
    ctl_conn *k = t->data;
    if (k->pending ? !try_answer(k) : !timed_out(k)) arm_timer(k); /* fired a little early */
}

/* The timer at the next thing due: a pending request's deadline; else the idle timeout, or
 * the request timeout of an unfinished line. */
static void arm_timer(ctl_conn *k)
{
    if (k->closing || k->follow) return;
    if (k->pending) {
        uint64_t now = uv_hrtime(), left = k->op.deadline > now ? k->op.deadline - now : 0;
        uv_timer_start(&k->timer, on_timer, left / 1000000 + 1, 0);
        return;
    }
    sw_control *c = k->ctl;
    uint64_t at = k->active_at + c->idle_ms, now = now_ms(c);
    if (k->line_at && k->line_at + c->request_ms < at) at = k->line_at + c->request_ms;
    uv_timer_start(&k->timer, on_timer, at > now ? at - now : 0, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    ctl_conn *k = h->data;
    *buf = uv_buf_init(k->ctl->readbuf, sizeof k->ctl->readbuf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    ctl_conn *k = stream->data;
    if (nread > 0) {
        feed(k, buf->base, (size_t)nread);
        arm_timer(k);
        return;
    }
    if (nread == 0) return;
    k->eof = true; /* end of input or an error: answer what is pending, then close */
    uv_read_stop(stream);
    if (nread != UV_EOF) close_conn(k);
    else if (!blocked(k)) finish_conn(k);
}

/* ---- connections ---- */

/* Only the user the host runs as may control it. */
static bool peer_allowed(ctl_conn *k, char *why, size_t size)
{
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno((uv_handle_t *)&k->pipe, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        snprintf(why, size, "cannot read the peer's credentials");
        return false;
    }
    if (cred.uid == geteuid()) return true;
    snprintf(why, size, "permission denied: uid %u may not control this host (it runs as uid %u)",
             (unsigned)cred.uid, (unsigned)geteuid());
    return false;
}

/* All connections are taken: closes the one idle longest (nothing pending, no reply waiting,
 * idle for SW_CTL_EVICT_IDLE_MS at least) for the newcomer k. false if there is none. */
static bool make_room(sw_control *c, const ctl_conn *k)
{
    uint64_t now = now_ms(c);
    ctl_conn *oldest = NULL;
    for (ctl_conn *o = c->conns; o; o = o->next) {
        if (o == k || o->pending || o->queued || o->follow ||
            now - o->active_at < SW_CTL_EVICT_IDLE_MS)
            continue;
        if (!oldest || o->active_at < oldest->active_at) oldest = o;
    }
    if (!oldest) return false;
    char why[200];
    snprintf(why, sizeof why, "idle for %gs: closed to make room for a new connection (at most %d)",
             (double)(now - oldest->active_at) / 1000, SW_CTL_MAX_CONNS);
    drop(oldest, why, true);
    return true;
}

static void on_connection(uv_stream_t *server, int status)
{
    sw_control *c = server->data;
    if (status < 0) return;
    ctl_conn *k = calloc(1, sizeof *k);
    if (!k) return;
    k->ctl = c;
    uv_pipe_init(server->loop, &k->pipe, 0);
    k->pipe.data = k;
    uv_timer_init(server->loop, &k->timer);
    k->timer.data = k;
    k->handles = 2;
    c->open_handles += 2;
    k->next = c->conns;
    if (c->conns) c->conns->link = &k->next;
    k->link = &c->conns;
    c->conns = k;
    c->n_conns++;
    k->active_at = now_ms(c);
    if (uv_accept(server, (uv_stream_t *)&k->pipe) != 0) {
        close_conn(k);
        return;
    }
    arm_timer(k);
    char why[160];
    bool ok = peer_allowed(k, why, sizeof why);
    if (ok && c->n_conns > SW_CTL_MAX_CONNS && !make_room(c, k)) {
        snprintf(why, sizeof why, "too many control connections (%d)", SW_CTL_MAX_CONNS);
        ok = false;
    }
    if (!ok) {
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = why};
        sw_log_write(c->sup->log, SW_LOG_WARN, NULL, "control connection refused", &f, 1);
        send_error(k, why);
        finish_conn(k);
        return;
    }
    uv_read_start((uv_stream_t *)&k->pipe, on_alloc, on_read);
}

/* ---- the socket file ---- */

static int listen_on(sw_control *c, const char *path, char *err, size_t errlen)
{
    uv_pipe_init(c->sup->loop, &c->server, 0);
    c->server.data = c;
    c->open_handles++;
    int rc = sw_ctl_bind_private(&c->server, path, &c->dev, &c->ino);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&c->server, 32, on_connection);
    if (rc != 0) snprintf(err, errlen, "cannot listen on %s: %s", path, uv_strerror(rc));
    return rc;
}

/* A duration in ns as the loop's ms; def (s) when it is not positive. */
static uint64_t limit_ms(int64_t ns, int def)
{
    return ns > 0 ? (uint64_t)(ns / 1000000) + (ns % 1000000 != 0) : (uint64_t)def * 1000;
}

sw_control *sw_control_open(sw_supervisor *s, const char *path, const sw_control_limits *limits,
                            char *err, size_t errlen)
{
    if (sw_ctl_claim_path(path, err, errlen) != 0) return NULL;
    sw_control *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->sup = s;
    c->start = uv_hrtime();
    c->idle_ms = limit_ms(limits ? limits->idle_timeout_ns : 0, SW_CTL_IDLE_TIMEOUT_S);
    c->request_ms = limit_ms(limits ? limits->request_timeout_ns : 0, SW_CTL_REQUEST_TIMEOUT_S);
    if (listen_on(c, path, err, errlen) != 0) {
        sw_control_close(c);
        return NULL;
    }
    sw_supervisor_on_change(s, on_change, c);
    c->ring = sw_log_rings(s->log);
    if (c->ring && sw_wake_init(s->loop, &c->feed, on_feed) == 0) {
        c->feed.data = c;
        c->open_handles++;
        sw_log_ring_set_wake(c->ring, wake_feed, &c->feed);
    } else c->ring = NULL; /* no wake-up: no logs requests either */
    sw_log_field f = {.key = "socket", .type = SW_LF_STR, .s = path};
    sw_log_write(s->log, SW_LOG_INFO, NULL, "control socket", &f, 1);
    return c;
}

void sw_control_remove_file(const sw_control *c)
{
    if (c) sw_ctl_unlink_if_ours(c->path, c->dev, c->ino);
}

void sw_control_close(sw_control *c)
{
    if (!c) return;
    sw_supervisor_on_change(c->sup, NULL, NULL);
    for (ctl_conn *k = c->conns; k;
         k = k->next) /* a short reply is written at once, before the close */
        if (k->pending) send_error(k, "the host shut down before the operation finished");
    while (c->conns) close_conn(c->conns);
    uv_close((uv_handle_t *)&c->server, on_handle_closed);
    if (c->ring) {
        sw_log_ring_set_wake(c->ring, NULL, NULL);
        sw_wake_close(&c->feed, on_feed_closed);
    }
    /* other handles (the supervisor's) keep the loop alive: turn it only until ours are gone */
    for (int i = 0; i < 1000 && c->open_handles > 0; i++) uv_run(c->sup->loop, UV_RUN_NOWAIT);
    sw_control_remove_file(c);
    forget_status(c);
    free(c->path);
    free(c);
}
