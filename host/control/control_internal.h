/* The control socket's internals, shared by control.c (closing, replies, the status document,
 * connections, the socket file), control_read.c (a connection's reading, requests and timers)
 * and control_follow.c (`logs` requests and their followers). Not for other files: they use
 * control.h. Thread: the loop's. */
#ifndef STEWARD_CONTROL_INTERNAL_H
#define STEWARD_CONTROL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "control.h"
#include "control_logs.h"
#include "control_ops.h"
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
                                supervisor tells of a change (ctl_on_change) or at its deadline */
    bool paused;        /* not read while SW_CTL_QUEUE_LOW bytes of replies wait */
    size_t queued;      /* bytes of replies handed to uv_write, not yet written */
    uint64_t active_at; /* uv_now of the last progress: accepted, a request, a reply written */
    uint64_t line_at;   /* uv_now of the first byte of an unfinished line; 0: none */
    sw_ctl_op op;
    backlog backlog;       /* bytes read after a pending request's line, or while paused */
    sw_ctl_follow *follow; /* a logs follower: sent new records until it closes; reads no more */
};

static inline uint64_t now_ms(const sw_control *c) { return uv_now(c->sup->loop); }

static inline bool blocked(const ctl_conn *k)
{
    return k->pending || k->queued >= SW_CTL_QUEUE_LOW;
}

/* Each function's contract is written at its definition. */

/* ---- in control.c: closing, replies, the status document ---- */

void ctl_close_conn(ctl_conn *k);
void ctl_finish_conn(ctl_conn *k);
void ctl_drop(ctl_conn *k, const char *why, bool tell);
void ctl_send_text(ctl_conn *k, reply_text *t);
void ctl_send_reply(ctl_conn *k, json_t *reply);
void ctl_send_error(ctl_conn *k, const char *msg);
void ctl_send_lines(ctl_conn *k, char *p, size_t n);
void ctl_forget_status(sw_control *c);
reply_text *ctl_status_text(sw_control *c);

/* ---- in control_read.c: a connection's reading, requests and timers ---- */

void ctl_resume(ctl_conn *k);
void ctl_arm_timer(ctl_conn *k);
void ctl_on_change(void *arg); /* the supervisor's change subscriber (arg: the sw_control) */
void ctl_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
void ctl_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* ---- in control_follow.c: logs requests and followers ---- */

void ctl_answer_logs(ctl_conn *k);
void ctl_follow_caught_up(ctl_conn *k);
void ctl_on_feed(sw_wake *w);  /* the rings' feed wake-up (data: the sw_control) */
void ctl_wake_feed(void *arg); /* the rings' wake-up hook (arg: the sw_wake) */
void ctl_on_feed_closed(uv_handle_t *h);

#endif
