/* The HTTP server's sockets and protocol (see http_server.h): accepting within max_connections,
 * reading into one buffer per server (an idle connection holds no buffer), parsing with
 * http-parser into a per-request buffer, the limits, a sweep of deadlines, responses, drain
 * and close, also after the runtime stopped the loops. */
#include "http_server.h"

#include <http_parser.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "proc.h"
#include "runtime.h"
#include "worker.h"

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
    bool read_end;   /* the peer closed its side while a request was served */
    int part;        /* what the parser gave last: 0 url, 1 header name, 2 header value */
    int fail_status; /* set by a parser callback: answer this and close */
    unsigned writes; /* uv_write requests in flight */
    char *acc;       /* the request: url \0 (name \0 value \0)* body */
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

static http_parser_settings settings;

/* ---- reference counts ---- */

void sw_hsrv_retain(sw_hsrv *srv) { atomic_fetch_add(&srv->refs, 1); }

void sw_hsrv_release(sw_hsrv *srv)
{
    if (atomic_fetch_sub(&srv->refs, 1) != 1) return;
    free(srv->slots);
    free(srv->free_slots);
    free(srv);
}

static void release_handle(uv_handle_t *h) { sw_hsrv_release(h->data); }

/* ---- the request buffer ---- */

static bool acc_add(hconn *c, const char *s, size_t n, bool lower)
{
    if (c->acc_len + n + 1 > c->acc_cap) {
        size_t cap = c->acc_cap ? c->acc_cap : 512;
        while (cap < c->acc_len + n + 1) cap *= 2;
        char *a = realloc(c->acc, cap);
        if (!a) return false;
        c->acc = a;
        c->acc_cap = cap;
    }
    char *d = c->acc + c->acc_len;
    if (lower)
        for (size_t i = 0; i < n; i++) d[i] = (s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i];
    else memcpy(d, s, n);
    c->acc_len += n;
    return true;
}

/* An idle connection holds no buffer (10,000 idle connections cost ~1 KB each). */
static void acc_free(hconn *c)
{
    free(c->acc);
    c->acc = NULL;
    c->acc_cap = c->acc_len = 0;
}

static void acc_reset(hconn *c)
{
    c->acc_len = c->head_bytes = c->n_headers = c->body_off = 0;
    c->part = 0;
}

/* ---- parser callbacks ---- */

static uint64_t now_ms(const hconn *c) { return uv_now(c->tcp.loop); }

static uint64_t ms_of(int64_t ns) { return (uint64_t)((ns + 999999) / 1000000); }

static int fail_with(hconn *c, int status)
{
    c->fail_status = status;
    return -1;
}

static int head_add(hconn *c, const char *at, size_t n, int part)
{
    c->head_bytes += n;
    if (c->head_bytes > c->srv->lim.max_header_size) return fail_with(c, 431);
    if (part != c->part && c->part != 0 && !acc_add(c, "", 1, false)) return fail_with(c, 500);
    if (part == 0 || part == c->part) return acc_add(c, at, n, part == 1) ? 0 : fail_with(c, 500);
    if (c->part == 0 && !acc_add(c, "", 1, false)) return fail_with(c, 500); /* the url's end */
    if (part == 1) c->n_headers++;
    c->part = part;
    return acc_add(c, at, n, part == 1) ? 0 : fail_with(c, 500);
}

static int on_message_begin(http_parser *p)
{
    hconn *c = p->data;
    acc_reset(c);
    c->state = C_READING;
    c->deadline = now_ms(c) + ms_of(c->srv->lim.header_timeout_ns);
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n) { return head_add(p->data, at, n, 0); }
static int on_field(http_parser *p, const char *at, size_t n)
{
    return head_add(p->data, at, n, 1);
}
static int on_value(http_parser *p, const char *at, size_t n)
{
    hconn *c = p->data;
    if (c->part == 1 && n == 0) return head_add(c, "", 0, 2); /* an empty value still ends a name */
    return head_add(c, at, n, 2);
}

static int on_headers_complete(http_parser *p)
{
    hconn *c = p->data;
    if (c->part == 1 && head_add(c, "", 0, 2) != 0) return -1; /* a name without a value */
    if (!acc_add(c, "", 1, false)) return fail_with(c, 500);   /* ends the url or last value */
    if (c->part == 0 && !acc_add(c, "", 1, false)) return fail_with(c, 500);
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > c->srv->lim.max_body_size)
        return fail_with(c, 413);
    c->body_off = c->acc_len;
    c->deadline = now_ms(c) + ms_of(c->srv->lim.idle_timeout_ns);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    hconn *c = p->data;
    if (c->acc_len - c->body_off + n > c->srv->lim.max_body_size) return fail_with(c, 413);
    c->deadline = now_ms(c) + ms_of(c->srv->lim.idle_timeout_ns);
    return acc_add(c, at, n, false) ? 0 : fail_with(c, 500);
}

static int on_message_complete(http_parser *p)
{
    http_parser_pause(p, 1); /* one request at a time: the rest waits until this is answered */
    return 0;
}

static void settings_make(void)
{
    http_parser_settings s;
    http_parser_settings_init(&s);
    s.on_message_begin = on_message_begin;
    s.on_url = on_url;
    s.on_header_field = on_field;
    s.on_header_value = on_value;
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    settings = s;
}

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;

/* ---- closing a connection ---- */

static bool loop_gone(const sw_hsrv *srv) { return uv_is_closing((uv_handle_t *)&srv->sentinel); }

static void free_conn(hconn *c)
{
    free(c->acc);
    free(c->pending);
    free(c);
}

static void on_conn_closed(uv_handle_t *h) { free_conn((hconn *)h); }

static void accept_one(sw_hsrv *srv);

static void conn_close(hconn *c)
{
    sw_hsrv *srv = c->srv;
    if (!c->srv) return;
    c->srv = NULL;
    c->state = C_CLOSING;
    if (c->prev) c->prev->next = c->next;
    else srv->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    srv->slots[c->slot] = NULL;
    srv->free_slots[srv->n_free++] = c->slot;
    srv->open--;
    if (loop_gone(srv)) free_conn(c); /* its handle is closed already */
    else uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    if (srv->accept_waiting && srv->listening && !srv->closed) {
        srv->accept_waiting = false;
        accept_one(srv);
    }
}

/* ---- writing ---- */

typedef struct hwrite {
    uv_write_t req;
    hconn *c;
    bool close_after;
    char data[];
} hwrite;

static void on_write(uv_write_t *req, int status)
{
    hwrite *w = (hwrite *)req;
    hconn *c = w->c;
    bool close_after = w->close_after;
    free(w);
    c->writes--;
    if (status == UV_ECANCELED || !c->srv) return; /* closing */
    if (status < 0 || (close_after && !c->writes)) conn_close(c);
}

/* Sends the bufs (copied only if the kernel does not take them at once); closes the
 * connection after them when close_after. */
static void conn_send(hconn *c, uv_buf_t *b, unsigned nb, bool close_after)
{
    size_t total = 0, done = 0;
    for (unsigned i = 0; i < nb; i++) total += b[i].len;
    if (!c->writes) {
        int r = uv_try_write((uv_stream_t *)&c->tcp, b, nb);
        if (r < 0 && r != UV_EAGAIN) {
            conn_close(c);
            return;
        }
        done = r > 0 ? (size_t)r : 0;
    }
    if (done == total) {
        if (close_after) conn_close(c);
        return;
    }
    hwrite *w = malloc(sizeof *w + (total - done));
    if (!w) {
        conn_close(c);
        return;
    }
    size_t off = 0, skip = done;
    for (unsigned i = 0; i < nb; i++) {
        size_t k = skip < b[i].len ? skip : b[i].len;
        skip -= k;
        memcpy(w->data + off, b[i].base + k, b[i].len - k);
        off += b[i].len - k;
    }
    w->c = c;
    w->close_after = close_after;
    uv_buf_t rest = uv_buf_init(w->data, (unsigned)off);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &rest, 1, on_write) != 0) {
        free(w);
        conn_close(c);
        return;
    }
    c->writes++;
}

static bool has_header(const char *head, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = head; line && line < head + len;) {
        if ((size_t)(head + len - line) > n && strncasecmp(line, name, n) == 0 && line[n] == ':')
            return true;
        const char *nl = memchr(line, '\n', (size_t)(head + len - line));
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

static void send_response(hconn *c, int status, const char *head, size_t head_len, const char *body,
                          size_t body_len, bool json, bool close)
{
    char line[256];
    const char *type = has_header(head, head_len, "content-type") ? ""
                       : json ? "content-type: application/json\r\n"
                              : "content-type: text/plain; charset=utf-8\r\n";
    int n = snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", status, sw_hsrv_reason(status));
    char tail[160];
    int t = snprintf(tail, sizeof tail, "%scontent-length: %zu\r\nconnection: %s\r\n\r\n", type,
                     body_len, close ? "close" : "keep-alive");
    uv_buf_t b[4] = {uv_buf_init(line, (unsigned)n), uv_buf_init((char *)head, (unsigned)head_len),
                     uv_buf_init(tail, (unsigned)t), uv_buf_init((char *)body, (unsigned)body_len)};
    conn_send(c, b, c->is_head ? 3 : 4, close);
}

static void stop_reading(hconn *c);

/* A request the server answers itself (400, 408, 413, 431): then the connection closes. */
static void conn_fail(hconn *c, int status)
{
    const char *why = sw_hsrv_reason(status);
    char body[80];
    int n = snprintf(body, sizeof body, "%s\n", why);
    c->is_head = false;
    stop_reading(c);
    c->state = C_CLOSING;
    c->deadline = now_ms(c) + ms_of(c->srv->lim.idle_timeout_ns);
    send_response(c, status, "", 0, body, (size_t)n, false, true);
}

/* ---- reading and parsing ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)suggested;
    hconn *c = (hconn *)h;
    *b = uv_buf_init(c->srv->rbuf, sizeof c->srv->rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b);

static void start_reading(hconn *c)
{
    if (c->reading || c->state == C_CLOSING) return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0) c->reading = true;
}

static void stop_reading(hconn *c)
{
    if (c->reading) uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
}

static void request_complete(hconn *c)
{
    sw_hsrv *srv = c->srv;
    c->state = C_WAITING;
    c->seq = ++srv->next_seq;
    c->keep_alive = http_should_keep_alive(&c->parser) && !srv->draining;
    c->is_head = c->parser.method == HTTP_HEAD;
    c->req = (sw_hsrv_request){
        .method = http_method_str((enum http_method)c->parser.method),
        .url = c->acc,
        .header = c->acc + strlen(c->acc) + 1,
        .n_headers = c->n_headers,
        .body = c->acc + c->body_off,
        .body_len = c->acc_len - c->body_off,
        .remote = c->remote,
    };
    sw_hsrv_token tok = {srv, c->slot, c->seq};
    srv->dispatch(srv->arg, &tok, &c->req);
}

/* Keeps bytes that came after a complete request (pipelining) until it is answered; past
 * READ_BUFFER of them the connection stops reading (backpressure). False: out of memory. */
static bool stash(hconn *c, const char *data, size_t len)
{
    char *p = realloc(c->pending, c->pending_len + len);
    if (!p) return false;
    memcpy(p + c->pending_len, data, len);
    c->pending = p;
    c->pending_len += len;
    if (c->pending_len >= READ_BUFFER) stop_reading(c);
    return true;
}

/* Parses len bytes; what follows a complete request waits in c->pending until it is answered. */
static void conn_feed(hconn *c, const char *data, size_t len)
{
    c->in_feed = true;
    while (len && (c->state == C_IDLE || c->state == C_READING)) {
        size_t n = http_parser_execute(&c->parser, &settings, data, len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        data += n;
        len -= n;
        if (e == HPE_PAUSED) {
            request_complete(c); /* may be answered at once: then the loop goes on */
            continue;
        }
        if (e != HPE_OK || n == 0) { /* n == 0: nothing it can take (an upgrade) */
            conn_fail(c, c->fail_status ? c->fail_status : e == HPE_HEADER_OVERFLOW ? 431 : 400);
            break;
        }
    }
    c->in_feed = false;
    if (c->state == C_CLOSING) return;
    if (len && !stash(c, data, len)) conn_close(c);
    else if (!len) start_reading(c); /* also while waiting: pipelined bytes are stashed */
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    hconn *c = (hconn *)st;
    if (n == 0 || !c->srv) return;
    if (n < 0 && c->state == C_WAITING) { /* it may have only shut its side: answer, then close */
        c->read_end = true;
        stop_reading(c);
        return;
    }
    if (n < 0) { /* the peer closed (or failed): nothing to answer to */
        conn_close(c);
        return;
    }
    if (c->state == C_WAITING) { /* the next pipelined request, read while this one is served */
        if (!stash(c, b->base, (size_t)n)) conn_close(c);
        return;
    }
    conn_feed(c, b->base, (size_t)n);
}

/* An answered request: the connection reads its next one (first what waits in pending). */
static void conn_next(hconn *c)
{
    c->seq = 0;
    c->state = C_IDLE;
    acc_free(c);
    c->deadline = now_ms(c) + ms_of(c->srv->lim.idle_timeout_ns);
    http_parser_pause(&c->parser, 0);
    if (c->in_feed) return; /* conn_feed goes on with the bytes it holds */
    char *p = c->pending;
    size_t len = c->pending_len;
    c->pending = NULL;
    c->pending_len = 0;
    if (p) conn_feed(c, p, len);
    else start_reading(c);
    free(p);
}

/* ---- answering ---- */

static hconn *conn_of(const sw_hsrv_token *tok)
{
    sw_hsrv *srv = tok->srv;
    if (srv->closed || tok->slot >= srv->cap) return NULL;
    hconn *c = srv->slots[tok->slot];
    return c && c->seq == tok->seq && c->state == C_WAITING ? c : NULL;
}

const sw_hsrv_request *sw_hsrv_request_of(const sw_hsrv_token *tok)
{
    hconn *c = conn_of(tok);
    return c ? &c->req : NULL;
}

int sw_hsrv_respond(const sw_hsrv_token *tok, int status, const char *head, size_t head_len,
                    const char *body, size_t body_len, bool json)
{
    hconn *c = conn_of(tok);
    if (!c) return -1;
    bool close = !c->keep_alive || c->srv->draining || c->read_end;
    if (close) { /* conn_send closes it once written (a peer that never reads: the sweep) */
        c->state = C_CLOSING;
        c->seq = 0;
        c->deadline = now_ms(c) + ms_of(c->srv->lim.idle_timeout_ns);
    }
    send_response(c, status, head, head_len, body, body_len, json, close);
    if (!close && c->srv) conn_next(c);
    return 0;
}

/* ---- accepting ---- */

static int slot_take(sw_hsrv *srv, uint32_t *slot)
{
    if (!srv->n_free) {
        uint32_t cap = srv->cap ? srv->cap * 2 : 16;
        hconn **slots = realloc(srv->slots, cap * sizeof *slots);
        if (slots) srv->slots = slots;
        uint32_t *fr = slots ? realloc(srv->free_slots, cap * sizeof *fr) : NULL;
        if (!fr) return -1;
        srv->free_slots = fr;
        for (uint32_t i = cap; i > srv->cap; i--) {
            srv->slots[i - 1] = NULL;
            srv->free_slots[srv->n_free++] = i - 1;
        }
        srv->cap = cap;
    }
    *slot = srv->free_slots[--srv->n_free];
    return 0;
}

static void name_peer(hconn *c)
{
    struct sockaddr_storage ss;
    int n = sizeof ss;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &n) == 0)
        sw_net_addr_format((struct sockaddr *)&ss, c->remote, sizeof c->remote);
}

static void accept_one(sw_hsrv *srv)
{
    hconn *c = calloc(1, sizeof *c);
    if (!c) return;
    uv_tcp_init(srv->listener.loop, &c->tcp);
    if (uv_accept((uv_stream_t *)&srv->listener, (uv_stream_t *)&c->tcp) != 0 ||
        slot_take(srv, &c->slot) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->srv = srv;
    srv->slots[c->slot] = c;
    srv->open++;
    c->next = srv->conns;
    if (c->next) c->next->prev = c;
    srv->conns = c;
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->state = C_IDLE;
    c->deadline = now_ms(c) + ms_of(srv->lim.header_timeout_ns);
    name_peer(c);
    start_reading(c);
}

static void on_connection(uv_stream_t *l, int status)
{
    sw_hsrv *srv = l->data;
    if (status < 0 || srv->closed) return;
    /* At the limit a connection waits in the kernel's backlog (libuv stops watching the
     * listener until it is accepted) and is taken when another one closes. */
    if (srv->open >= (uint32_t)srv->lim.max_connections) srv->accept_waiting = true;
    else accept_one(srv);
}

/* ---- deadlines ---- */

static void on_sweep(uv_timer_t *t)
{
    sw_hsrv *srv = t->data;
    uint64_t now = uv_now(t->loop);
    for (hconn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (now < c->deadline) continue;
        if (c->state == C_READING) conn_fail(c, 408);
        else if (c->state != C_WAITING) conn_close(c); /* idle, or its last answer unread */
    }
}

static uint64_t sweep_period(const sw_hsrv_limits *l)
{
    int64_t least =
        l->header_timeout_ns < l->idle_timeout_ns ? l->header_timeout_ns : l->idle_timeout_ns;
    uint64_t ms = ms_of(least / 8);
    return ms < 10 ? 10 : ms > 1000 ? 1000 : ms;
}

/* ---- the server ---- */

sw_hsrv *sw_hsrv_start(sw_proc *p, const sw_net_addr *a, const sw_hsrv_limits *lim,
                       sw_hsrv_dispatch_fn dispatch, void *arg, int *err)
{
    sw_worker *w = sw_worker_current();
    if (!w || w != p->worker) {
        *err = SW_NET_ETHREAD;
        return NULL;
    }
    pthread_once(&settings_once, settings_make);
    sw_hsrv *srv = calloc(1, sizeof *srv);
    hs_timer *t = calloc(1, sizeof *t);
    if (!srv || !t) {
        free(srv);
        free(t);
        *err = UV_ENOMEM;
        return NULL;
    }
    atomic_init(&srv->refs, 1);
    srv->lim = *lim;
    srv->dispatch = dispatch;
    srv->arg = arg;
    srv->timer = t;
    uv_prepare_init(&w->loop, &srv->sentinel);
    uv_tcp_init(&w->loop, &srv->listener);
    uv_timer_init(&w->loop, &t->h);
    srv->sentinel.data = srv->listener.data = t->h.data = srv;
    int rc = uv_tcp_bind(&srv->listener, &a->ip.sa, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&srv->listener, SW_NET_BACKLOG, on_connection);
    srv->listening = true;
    srv->proc = p;
    sw_proc_retain(p);
    atomic_fetch_add(&p->pins, 1); /* its handles are on this loop: never stolen */
    if (rc != 0) {
        *err = rc;
        sw_hsrv_close(srv);
        sw_hsrv_release(srv);
        return NULL;
    }
    uint64_t period = sweep_period(lim);
    uv_timer_start(&t->h, on_sweep, period, period);
    return srv;
}

int sw_hsrv_address(sw_hsrv *srv, char *out, size_t len)
{
    struct sockaddr_storage ss;
    int n = sizeof ss;
    int rc = uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&ss, &n);
    if (rc == 0) sw_net_addr_format((struct sockaddr *)&ss, out, len);
    return rc;
}

static void close_listener(sw_hsrv *srv)
{
    if (!srv->listening) return;
    srv->listening = false;
    if (loop_gone(srv)) return;
    sw_hsrv_retain(srv); /* until libuv is done with it */
    uv_close((uv_handle_t *)&srv->listener, release_handle);
}

void sw_hsrv_drain(sw_hsrv *srv)
{
    srv->draining = true;
    close_listener(srv);
    for (hconn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == C_IDLE) conn_close(c);
    }
}

size_t sw_hsrv_connections(const sw_hsrv *srv) { return srv->open; }

static void free_timer(uv_handle_t *h) { free(h); }

void sw_hsrv_close(sw_hsrv *srv)
{
    if (srv->closed) return;
    srv->closed = true;
    bool gone = loop_gone(srv);
    while (srv->conns) conn_close(srv->conns);
    close_listener(srv);
    if (!gone) { /* else sw_workers_stop freed the timer and closed the sentinel */
        uv_close((uv_handle_t *)&srv->timer->h, free_timer);
        sw_hsrv_retain(srv);
        uv_close((uv_handle_t *)&srv->sentinel, release_handle);
    }
    srv->timer = NULL;
    atomic_fetch_sub(&srv->proc->pins, 1);
    sw_proc_release(srv->proc);
    srv->proc = NULL;
}

const char *sw_hsrv_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

/* ---- the service's process ---- */

/* The process.lua every http.service runs: the host's own chunk, no user code. */
static const sw_entry server_entry = {
    .id = "steward:http.server",
    .ns = "steward",
    .name = "http.server",
    .kind = SW_KIND_PROCESS_LUA,
    .as.process_lua = {.source = {.shipped = "http_server"}},
};

void sw_runtime_http_service(sw_runtime *rt, sw_spawn *sp)
{
    sp->entry = &server_entry;
    sp->main_hook = rt->http_server_main;
}
