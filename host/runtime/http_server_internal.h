/* The HTTP server's internals, shared by http_server.c (the listener, deadlines, drain and
 * close) and http_conn.c (one connection: reading, parsing, answering). Not for other files:
 * they use http_server.h. Thread: the worker running the server's process (see there). */
#ifndef STEWARD_HTTP_SERVER_INTERNAL_H
#define STEWARD_HTTP_SERVER_INTERNAL_H

#include <http_parser.h>
#include <stdatomic.h>
#include <uv.h>

#include "http_server.h"

#define READ_BUFFER (64 * 1024) /* per server: connections read into it in turn */

typedef enum { C_IDLE, C_READING, C_WAITING, C_CLOSING } conn_state;

typedef struct hconn hconn;

/* The deadline sweep's timer: first, as sw_workers_stop frees a timer it closes with free(h). */
typedef struct hs_timer {
    uv_timer_t h;
} hs_timer;

struct hconn {
    uv_tcp_t tcp; /* first: callbacks get its address */
    sw_hsrv *srv;
    hconn *prev, *next; /* the server's connections, for the sweep */
    http_parser parser;
    uint32_t slot;
    uint64_t seq;      /* the request in flight (C_WAITING), else 0 */
    uint64_t deadline; /* uv_now ms: reading a request or idle past it ends it */
    conn_state state;
    bool reading, keep_alive, is_head, in_feed;
    bool read_end;      /* the peer closed its side while a request was served */
    bool want_continue; /* the request asked for "100 Continue" before its body */
    bool served;        /* it answered a request (keep-alive): later ones are timed anew */
    int part;           /* what the parser gave last: 0 url, 1 header name, 2 header value */
    int fail_status;    /* set by a parser callback: answer this and close */
    unsigned writes;    /* uv_write requests in flight */
    char *acc;          /* the request: url \0 (name \0 value \0)* body */
    size_t acc_len, acc_cap, head_bytes, n_headers, body_off;
    char *pending; /* bytes after a complete request (pipelining), parsed once it is answered */
    size_t pending_len;
    sw_hsrv_request req;
    char remote[64];
};

struct sw_hsrv {
    atomic_int refs;
    uv_tcp_t listener;
    uv_prepare_t sentinel; /* never started: closed by sw_workers_stop's walk, it tells that the
                            * loop is gone (its handles closed, its timers freed) */
    hs_timer *timer;
    sw_proc *proc;
    sw_hsrv_limits lim;
    sw_hsrv_dispatch_fn dispatch;
    void *arg;
    hconn **slots;
    uint32_t *free_slots;
    uint32_t cap, n_free, open;
    hconn *conns;
    uint64_t next_seq;
    bool listening, draining, closed, accept_waiting;
    char rbuf[READ_BUFFER];
};

/* ms of the loop's clock, and ns as whole ms (rounded up: a deadline is never early). */
static inline uint64_t now_ms(const hconn *c) { return uv_now(c->tcp.loop); }
static inline uint64_t ms_of(int64_t ns) { return (uint64_t)((ns + 999999) / 1000000); }

/* sw_workers_stop closed the loop's handles (and freed its timers): nothing of libuv is left
 * to call. */
static inline bool hs_loop_gone(const sw_hsrv *srv)
{
    return uv_is_closing((uv_handle_t *)&srv->sentinel);
}

/* ---- http_conn.c ---- */

/* The parser's callbacks, set once per host. */
void hs_settings_init(void);
/* Accepts the listener's next connection (reads start at once). */
void hs_conn_accept(sw_hsrv *srv);
/* Closes c now (its memory goes once libuv is done with it); takes a waiting connection. */
void hs_conn_close(hconn *c);
/* Answers status itself (400, 408, 413, 431), then closes c once that is written. */
void hs_conn_fail(hconn *c, int status);

#endif
