/* One connection of the HTTP server (see http_server.h): a request read into a buffer of
 * its own through the server's shared read buffer, parsed with http-parser under the limits,
 * handed to the dispatch callback, answered (pipelined requests wait, in order), and closed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_server_internal.h"

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
    if (c->served) /* a first request's time counts from the accept */
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

/* Whether the request's headers (in acc after the url) ask for "expect: 100-continue". */
static bool expects_continue(const hconn *c)
{
    const char *h = c->acc + strlen(c->acc) + 1;
    for (size_t i = 0; i < c->n_headers; i++) {
        const char *value = h + strlen(h) + 1;
        if (strcmp(h, "expect") == 0 && strcasecmp(value, "100-continue") == 0) return true;
        h = value + strlen(value) + 1;
    }
    return false;
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
    c->want_continue = expects_continue(c); /* sent after this parse (a callback cannot write) */
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

static http_parser_settings settings;

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

void hs_settings_init(void) { pthread_once(&settings_once, settings_make); }

/* ---- closing a connection ---- */

static void free_conn(hconn *c)
{
    free(c->acc);
    free(c->pending);
    free(c);
}

static void on_conn_closed(uv_handle_t *h) { free_conn((hconn *)h); }

void hs_conn_close(hconn *c)
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
    if (hs_loop_gone(srv)) free_conn(c); /* its handle is closed already */
    else uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    if (srv->accept_waiting && srv->listening && !srv->closed) {
        srv->accept_waiting = false;
        hs_conn_accept(srv);
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
    if (status < 0 || (close_after && !c->writes)) hs_conn_close(c);
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
            hs_conn_close(c);
            return;
        }
        done = r > 0 ? (size_t)r : 0;
    }
    if (done == total) {
        if (close_after) hs_conn_close(c);
        return;
    }
    hwrite *w = malloc(sizeof *w + (total - done));
    if (!w) {
        hs_conn_close(c);
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
        hs_conn_close(c);
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
void hs_conn_fail(hconn *c, int status)
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
            c->want_continue = false; /* the body is here already */
            request_complete(c);      /* may be answered at once: then the loop goes on */
            continue;
        }
        if (e != HPE_OK || n == 0) { /* n == 0: nothing it can take (an upgrade) */
            hs_conn_fail(c, c->fail_status ? c->fail_status : e == HPE_HEADER_OVERFLOW ? 431 : 400);
            break;
        }
    }
    c->in_feed = false;
    if (c->want_continue && c->state == C_READING) { /* curl waits a second for it */
        c->want_continue = false;
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        conn_send(c, &(uv_buf_t){.base = (char *)cont, .len = sizeof cont - 1}, 1, false);
    }
    if (c->state == C_CLOSING) return;
    if (len && !stash(c, data, len)) hs_conn_close(c);
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
        hs_conn_close(c);
        return;
    }
    if (c->state == C_WAITING) { /* the next pipelined request, read while this one is served */
        if (!stash(c, b->base, (size_t)n)) hs_conn_close(c);
        return;
    }
    conn_feed(c, b->base, (size_t)n);
}

/* An answered request: the connection reads its next one (first what waits in pending). */
static void conn_next(hconn *c)
{
    c->served = true;
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

void hs_conn_accept(sw_hsrv *srv)
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
