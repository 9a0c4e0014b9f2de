/* The metrics endpoint's transport (see metrics.h): the TCP listener on the supervisor's loop,
 * one record per connection (a socket and its deadline), the request parsed with http-parser
 * as it arrives, one answer, then a lingering close: the write side is shut and what the client
 * still sends is read and dropped until it closes or the deadline, so a client that sent more
 * than was read still gets the answer (no reset). What is answered is metrics_text.c's. */
#include "metrics.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_server.h"
#include "metrics_text.h"

#define PATH_MAX_LEN 256 /* a longer path is not /metrics: 404 */

typedef struct mconn mconn;

struct sw_metrics {
    uv_tcp_t server;
    sw_supervisor *sup;
    uint64_t start; /* uv_hrtime at the open: the host's uptime */
    mconn *conns;
    size_t n_conns;
    int open_handles;    /* handles not yet closed (for sw_metrics_close) */
    bool accept_waiting; /* a connection waits in the listener for a free place */
    bool closed;
    char readbuf[2 * SW_METRICS_MAX_REQUEST]; /* reads are handled one at a time on the loop */
};

struct mconn {
    uv_tcp_t tcp;
    uv_timer_t timer; /* SW_METRICS_TIMEOUT_MS after the accept: closed */
    int handles;      /* of tcp and timer, not yet closed */
    sw_metrics *m;
    mconn *next, **link;
    http_parser parser;
    size_t parsed; /* request bytes the parser took */
    char path[PATH_MAX_LEN + 1];
    size_t path_len;
    bool path_long, headers_done, complete;
    int fail;      /* set by a parser callback: answer this status */
    bool answered; /* then only reads to drop, until the client closes */
    bool writing;  /* the answer is not all written yet */
    bool eof;      /* the client closed its side: closed once the answer is written */
    bool closing;
};

/* ---- closing ---- */

static void accept_one(sw_metrics *m);

static void on_handle_closed(uv_handle_t *h)
{
    sw_metrics *m = h->data;
    m->open_handles--;
}

static void on_conn_closed(uv_handle_t *h)
{
    mconn *c = h->data;
    c->m->open_handles--;
    if (--c->handles == 0) free(c);
}

static void close_conn(mconn *c)
{
    if (c->closing) return;
    c->closing = true;
    *c->link = c->next;
    if (c->next) c->next->link = c->link;
    c->m->n_conns--;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
    if (c->m->accept_waiting && !c->m->closed) {
        c->m->accept_waiting = false;
        accept_one(c->m);
    }
}

/* ---- parsing ---- */

static int on_url(http_parser *p, const char *at, size_t n)
{
    mconn *c = p->data;
    if (c->path_len + n > PATH_MAX_LEN) c->path_long = true;
    else {
        memcpy(c->path + c->path_len, at, n);
        c->path_len += n;
        c->path[c->path_len] = 0;
    }
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    mconn *c = p->data;
    c->headers_done = true;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > SW_METRICS_MAX_REQUEST) {
        c->fail = 413;
        return -1;
    }
    return 0;
}

static int on_message_complete(http_parser *p)
{
    mconn *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one request per connection: what follows is dropped */
    return 0;
}

static const http_parser_settings settings = {.on_url = on_url,
                                              .on_headers_complete = on_headers_complete,
                                              .on_message_complete = on_message_complete};

/* ---- answering ---- */

typedef struct mwrite {
    uv_write_t req;
    mconn *c;
    char *body; /* malloc'd, or NULL: the reason phrase in text is the body */
    char head[256], text[64];
} mwrite;

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status; /* the client's end of input, or the deadline, closes it */
    free(req);
}

static void on_written(uv_write_t *req, int status)
{
    mwrite *w = (mwrite *)req;
    mconn *c = w->c;
    free(w->body);
    free(w);
    c->writing = false;
    if (c->closing) return;
    if (c->eof) {
        close_conn(c);
        return;
    }
    uv_shutdown_t *sd = status == 0 ? malloc(sizeof *sd) : NULL;
    if (!sd || uv_shutdown(sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        free(sd);
        close_conn(c);
    }
}

/* The status line and headers of an answer of len bytes into w->head; their length. */
static unsigned head_of(mwrite *w, int status, size_t len)
{
    const char *type =
        status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8";
    int n = snprintf(w->head, sizeof w->head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n",
                     status, sw_hsrv_reason(status), type, len,
                     status == 405 ? "Allow: GET, HEAD\r\n" : "");
    return (unsigned)n;
}

/* Sends status with body (taken; NULL: the reason phrase), without it for a HEAD. */
static void answer(mconn *c, int status, char *body, size_t len, bool head_only)
{
    c->answered = true;
    mwrite *w = malloc(sizeof *w);
    if (!w) {
        free(body);
        close_conn(c);
        return;
    }
    w->c = c;
    w->body = body;
    if (!body) len = (size_t)snprintf(w->text, sizeof w->text, "%s\n", sw_hsrv_reason(status));
    uv_buf_t bufs[2] = {uv_buf_init(w->head, head_of(w, status, len)),
                        uv_buf_init(body ? body : w->text, (unsigned)(head_only ? 0 : len))};
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, 2, on_written) != 0) {
        free(body);
        free(w);
        close_conn(c);
        return;
    }
    c->writing = true;
}

/* A complete request: /metrics for GET or HEAD, 405 for another method, 404 elsewhere. */
static void route(mconn *c)
{
    char *q = strchr(c->path, '?');
    if (q) *q = 0;
    if (c->path_long || strcmp(c->path, "/metrics") != 0) {
        answer(c, 404, NULL, 0, false);
        return;
    }
    bool head = c->parser.method == HTTP_HEAD;
    if (c->parser.method != HTTP_GET && !head) {
        answer(c, 405, NULL, 0, false);
        return;
    }
    size_t len = 0;
    char *body = sw_metrics_render(c->m->sup, c->m->start, &len);
    if (body) answer(c, 200, body, len, head);
    else answer(c, 500, NULL, 0, false);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)suggested;
    mconn *c = h->data;
    *b = uv_buf_init(c->m->readbuf, sizeof c->m->readbuf);
}

/* Parses what came, up to one byte past SW_METRICS_MAX_REQUEST (that byte tells a request too
 * long: 431 while in its head, 413 in its body), and answers once there is something to say. */
static void feed(mconn *c, const char *data, size_t n)
{
    size_t room = SW_METRICS_MAX_REQUEST + 1 - c->parsed;
    c->parsed += http_parser_execute(&c->parser, &settings, data, n < room ? n : room);
    if (c->fail) answer(c, c->fail, NULL, 0, false);
    else if (c->complete) route(c);
    else if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) answer(c, 400, NULL, 0, false);
    else if (c->parsed > SW_METRICS_MAX_REQUEST)
        answer(c, c->headers_done ? 413 : 431, NULL, 0, false);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    mconn *c = st->data;
    if (n < 0 && c->writing) { /* a client that half-closed after its request */
        c->eof = true;
        uv_read_stop(st);
    } else if (n < 0) {
        close_conn(c); /* the client closed (before its request ended, or after the answer) */
        return;
    }
    if (n > 0 && !c->answered) feed(c, b->base, (size_t)n);
}

static void on_deadline(uv_timer_t *t)
{
    mconn *c = t->data;
    if (!c->answered) {
        char text[128];
        int len = snprintf(text, sizeof text,
                           "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: "
                           "close\r\n\r\n");
        uv_buf_t buf = uv_buf_init(text, (unsigned)len);
        (void)uv_try_write((uv_stream_t *)&c->tcp, &buf, 1); /* best effort */
    }
    close_conn(c);
}

/* ---- accepting ---- */

static void accept_one(sw_metrics *m)
{
    mconn *c = calloc(1, sizeof *c);
    if (!c) { /* the connection waits in the listener for the next close */
        m->accept_waiting = true;
        return;
    }
    c->m = m;
    uv_tcp_init(m->sup->loop, &c->tcp);
    uv_timer_init(m->sup->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles = 2;
    m->open_handles += 2;
    c->next = m->conns;
    if (c->next) c->next->link = &c->next;
    c->link = &m->conns;
    m->conns = c;
    m->n_conns++;
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    if (uv_accept((uv_stream_t *)&m->server, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        close_conn(c);
        return;
    }
    uv_timer_start(&c->timer, on_deadline, SW_METRICS_TIMEOUT_MS, 0);
}

static void on_connection(uv_stream_t *server, int status)
{
    sw_metrics *m = server->data;
    if (status != 0 || m->closed) return;
    /* at the bound, the connection stays in the listener (libuv stops accepting more) until
     * one closes */
    if (m->n_conns >= SW_METRICS_MAX_CONNS) m->accept_waiting = true;
    else accept_one(m);
}

/* ---- opening and closing ---- */

int sw_metrics_parse_listen(const char *listen, sw_net_addr *a, char *err, size_t errlen)
{
    char uri[300], resource[300], why[400];
    bool ok = strlen(listen) < 200 && !strstr(listen, "://");
    if (ok) {
        snprintf(uri, sizeof uri, "tcp://%s", listen);
        ok = sw_net_addr_parse(uri, a, resource, sizeof resource, why, sizeof why) == 0;
    }
    if (ok) return 0;
    snprintf(err, errlen,
             "invalid address \"%s\": expected HOST:PORT (HOST a numeric IP address, [IPv6] or "
             "localhost; PORT 0-65535), e.g. \"127.0.0.1:9100\"",
             listen);
    return -1;
}

/* Logs "metrics listening" with the address bound (port 0 resolved). */
static void log_listening(sw_metrics *m)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char addr[128] = "unknown";
    int port = 0;
    if (uv_tcp_getsockname(&m->server, (struct sockaddr *)&ss, &len) == 0) {
        sw_net_addr_format((struct sockaddr *)&ss, addr, sizeof addr);
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    }
    const char *shown = strncmp(addr, "tcp://", 6) == 0 ? addr + 6 : addr;
    sw_log_field f[] = {{.key = "address", .type = SW_LF_STR, .s = shown},
                        {.key = "port", .type = SW_LF_INT, .i = port}};
    sw_log_write(m->sup->log, SW_LOG_INFO, NULL, "metrics listening", f, 2);
}

sw_metrics *sw_metrics_open(sw_supervisor *s, const char *listen, char *err, size_t errlen)
{
    sw_net_addr a;
    if (sw_metrics_parse_listen(listen, &a, err, errlen) != 0) return NULL;
    sw_metrics *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->sup = s;
    m->start = uv_hrtime();
    uv_tcp_init(s->loop, &m->server);
    m->server.data = m;
    m->open_handles = 1;
    int rc = uv_tcp_bind(&m->server, &a.ip.sa, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&m->server, 128, on_connection);
    if (rc != 0) {
        snprintf(err, errlen, "metrics.listen %s: %s", listen, uv_strerror(rc));
        sw_metrics_close(m);
        return NULL;
    }
    log_listening(m);
    return m;
}

void sw_metrics_close(sw_metrics *m)
{
    if (!m) return;
    m->closed = true;
    while (m->conns) close_conn(m->conns);
    uv_close((uv_handle_t *)&m->server, on_handle_closed);
    for (int i = 0; i < 1000 && m->open_handles > 0; i++) uv_run(m->sup->loop, UV_RUN_NOWAIT);
    free(m);
}
