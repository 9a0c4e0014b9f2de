/* A control connection's reading (control_internal.h): bytes split into request lines with a
 * length cap, each request begun (what it does is control_ops.c's business), reading paused
 * while a request is pending or replies wait, and the connection's timer (a pending request's
 * deadline, the idle and request timeouts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"

static void feed(ctl_conn *k, const char *p, size_t n);

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
        reply_text *t = ctl_status_text(k->ctl);
        if (t) ctl_send_text(k, t);
        else ctl_send_error(k, "out of memory");
        return;
    }
    case SW_CTL_ANSWERED: ctl_send_reply(k, reply); return;
    case SW_CTL_LOGS_READ: ctl_answer_logs(k); return;
    case SW_CTL_WAITING:
        k->pending =
            true; /* the reply comes with a change or at the deadline; read no more until then */
        uv_read_stop((uv_stream_t *)&k->pipe);
        ctl_arm_timer(k);
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
            ctl_drop(k, "out of memory", false);
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
            ctl_send_error(k, "request too long (more than 4096 bytes): ignored");
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
void ctl_resume(ctl_conn *k)
{
    k->paused = false;
    backlog rest = k->backlog;
    k->backlog = (backlog){0};
    feed(k, rest.p, rest.len);
    free(rest.p);
    if (k->closing) return;
    if (blocked(k)) pause_reading(k);
    else if (k->eof) ctl_finish_conn(k);
    else uv_read_start((uv_stream_t *)&k->pipe, ctl_on_alloc, ctl_on_read);
    ctl_arm_timer(k);
}

/* Answers k's pending request if its services settled or its deadline passed. */
static bool try_answer(ctl_conn *k)
{
    json_t *reply;
    if (!sw_ctl_op_poll(&k->op, k->ctl->sup, &reply)) return false;
    uv_timer_stop(&k->timer);
    k->pending = false;
    k->active_at = now_ms(k->ctl);
    ctl_send_reply(k, reply);
    ctl_resume(k);
    return true;
}

/* The supervisor's change subscriber: called at the end of an entry point that changed a
 * service or group. A request made from here (ctl_resume reads the next line) is told of by a
 * further call. */
void ctl_on_change(void *arg)
{
    sw_control *c = arg;
    ctl_forget_status(c);
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
        ctl_drop(k, why, true);
        return true;
    }
    if (now - k->active_at < c->idle_ms) return false;
    if (k->queued)
        snprintf(why, sizeof why, "replies not read for %gs (%zu bytes waiting)",
                 (double)c->idle_ms / 1000, k->queued);
    else snprintf(why, sizeof why, "idle for %gs", (double)c->idle_ms / 1000);
    ctl_drop(k, why, k->queued == 0);
    return true;
}

static void on_timer(uv_timer_t *t)
{
    ctl_conn *k = t->data;
    if (k->pending ? !try_answer(k) : !timed_out(k)) ctl_arm_timer(k); /* fired a little early */
}

/* The timer at the next thing due: a pending request's deadline; else the idle timeout, or
 * the request timeout of an unfinished line. */
void ctl_arm_timer(ctl_conn *k)
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

void ctl_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    ctl_conn *k = h->data;
    *buf = uv_buf_init(k->ctl->readbuf, sizeof k->ctl->readbuf);
}

void ctl_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    ctl_conn *k = stream->data;
    if (nread > 0) {
        feed(k, buf->base, (size_t)nread);
        ctl_arm_timer(k);
        return;
    }
    if (nread == 0) return;
    k->eof = true; /* end of input or an error: answer what is pending, then close */
    uv_read_stop(stream);
    if (nread != UV_EOF) ctl_close_conn(k);
    else if (!blocked(k)) ctl_finish_conn(k);
}
