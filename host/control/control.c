/* The control socket's transport (see control.h): the listening pipe, one record per client
 * connection, peer-credential checks, and replies (JSON values from control_ops.c, written as
 * lines by json.h) in request order; the limits on clients (reply queue, connection count) and
 * the shared status document. A connection's reading, requests and timeouts are
 * control_read.c's, `logs` followers control_follow.c's (their shared parts:
 * control_internal.h); what a request does is control_ops.c's business. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control_internal.h"
#include "control_path.h"
#include "control_status.h"

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
void ctl_close_conn(ctl_conn *k)
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
    ctl_close_conn(req->data);
    free(req);
}

/* After the client's end of input: close once what was written has gone out. */
void ctl_finish_conn(ctl_conn *k)
{
    if (k->closing || k->finishing) return;
    k->finishing = true;
    uv_shutdown_t *req = malloc(sizeof *req);
    if (!req || uv_shutdown(req, (uv_stream_t *)&k->pipe, on_shutdown) != 0) {
        free(req);
        ctl_close_conn(k);
        return;
    }
    req->data = k;
}

/* Closes k for a reason, logged as a warning; tell: first try to write the reason to it as an
 * error reply, if nothing else waits to be written (never waiting for it). */
void ctl_drop(ctl_conn *k, const char *why, bool tell)
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
    ctl_close_conn(k);
}

/* ---- replies ---- */

/* One write of a reply to one client. */
typedef struct ctl_write {
    uv_write_t req;
    ctl_conn *k;
    reply_text *text;
} ctl_write;

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

static void on_written(uv_write_t *req, int status)
{
    ctl_write *w = (ctl_write *)req;
    ctl_conn *k = w->k;
    k->queued -= w->text->len;
    text_release(w->text);
    free(w);
    if (status != 0 || k->closing) return; /* a client that went away: nothing to tell */
    k->active_at = now_ms(k->ctl);
    if (k->follow) ctl_follow_caught_up(k);
    else if (k->paused && !blocked(k)) ctl_resume(k);
    else ctl_arm_timer(k);
}

/* Writes t (a reference is taken) to k. A client with replies waiting that would pass
 * SW_CTL_QUEUE_MAX is dropped instead. */
void ctl_send_text(ctl_conn *k, reply_text *t)
{
    if (k->closing) return;
    if (k->queued > 0 && k->queued + t->len > SW_CTL_QUEUE_MAX) {
        char why[200];
        snprintf(why, sizeof why, "replies not read: %zu bytes would wait (at most %zu)",
                 k->queued + t->len, SW_CTL_QUEUE_MAX);
        ctl_drop(k, why, false);
        return;
    }
    ctl_write *w = malloc(sizeof *w);
    if (!w) {
        ctl_drop(k, "out of memory", false);
        return;
    }
    w->k = k;
    w->text = t;
    t->refs++;
    uv_buf_t buf = uv_buf_init(t->p, (unsigned)t->len);
    if (uv_write(&w->req, (uv_stream_t *)&k->pipe, &buf, 1, on_written) != 0) {
        text_release(t);
        free(w);
        ctl_close_conn(k);
        return;
    }
    k->queued += t->len;
}

/* Sends the reply as one line and releases it. A reply that could not be built (NULL: memory
 * ran out) is replaced by an "out of memory" error, if that can be. */
void ctl_send_reply(ctl_conn *k, json_t *reply)
{
    reply_text *t = text_of(reply);
    if (!t) t = text_of(sw_ctl_error_reply("out of memory"));
    if (t) ctl_send_text(k, t);
    text_release(t);
}

void ctl_send_error(ctl_conn *k, const char *msg) { ctl_send_reply(k, sw_ctl_error_reply(msg)); }

/* Sends n bytes of whole lines (p is freed). */
void ctl_send_lines(ctl_conn *k, char *p, size_t n)
{
    reply_text *t = p && n ? malloc(sizeof *t + n) : NULL;
    if (t) {
        t->refs = 1;
        t->len = n;
        memcpy(t->p, p, n);
        ctl_send_text(k, t);
        text_release(t);
    }
    free(p);
}

/* ---- the status document ---- */

void ctl_forget_status(sw_control *c)
{
    text_release(c->status);
    c->status = NULL;
}

/* The status document of every service: built at most once per supervisor change, and again
 * when older than SW_CTL_STATUS_MAX_AGE_MS (its uptimes move on). NULL when memory runs out. */
reply_text *ctl_status_text(sw_control *c)
{
    uint64_t now = now_ms(c);
    if (c->status && now - c->status_at < SW_CTL_STATUS_MAX_AGE_MS) return c->status;
    ctl_forget_status(c);
    c->status = text_of(sw_ctl_status_all(c->sup, c->start));
    c->status_at = now;
    return c->status;
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
    ctl_drop(oldest, why, true);
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
        ctl_close_conn(k);
        return;
    }
    ctl_arm_timer(k);
    char why[160];
    bool ok = peer_allowed(k, why, sizeof why);
    if (ok && c->n_conns > SW_CTL_MAX_CONNS && !make_room(c, k)) {
        snprintf(why, sizeof why, "too many control connections (%d)", SW_CTL_MAX_CONNS);
        ok = false;
    }
    if (!ok) {
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = why};
        sw_log_write(c->sup->log, SW_LOG_WARN, NULL, "control connection refused", &f, 1);
        ctl_send_error(k, why);
        ctl_finish_conn(k);
        return;
    }
    uv_read_start((uv_stream_t *)&k->pipe, ctl_on_alloc, ctl_on_read);
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
    sw_supervisor_on_change(s, ctl_on_change, c);
    c->ring = sw_log_rings(s->log);
    if (c->ring && sw_wake_init(s->loop, &c->feed, ctl_on_feed) == 0) {
        c->feed.data = c;
        c->open_handles++;
        sw_log_ring_set_wake(c->ring, ctl_wake_feed, &c->feed);
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
        if (k->pending) ctl_send_error(k, "the host shut down before the operation finished");
    while (c->conns) ctl_close_conn(c->conns);
    uv_close((uv_handle_t *)&c->server, on_handle_closed);
    if (c->ring) {
        sw_log_ring_set_wake(c->ring, NULL, NULL);
        sw_wake_close(&c->feed, ctl_on_feed_closed);
    }
    /* other handles (the supervisor's) keep the loop alive: turn it only until ours are gone */
    for (int i = 0; i < 1000 && c->open_handles > 0; i++) uv_run(c->sup->loop, UV_RUN_NOWAIT);
    sw_control_remove_file(c);
    ctl_forget_status(c);
    free(c->path);
    free(c);
}
