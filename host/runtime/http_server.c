/* The HTTP server (see http_server.h): the listener within max_connections, the sweep of
 * deadlines, drain and close (also after the runtime stopped the loops), and the process an
 * http.service runs. One connection's protocol is http_conn.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_server_internal.h"
#include "proc.h"
#include "runtime.h"
#include "worker.h"

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

/* ---- accepting ---- */

static void on_connection(uv_stream_t *l, int status)
{
    sw_hsrv *srv = l->data;
    if (status < 0 || srv->closed) return;
    /* At the limit a connection waits in the kernel's backlog (libuv stops watching the
     * listener until it is accepted) and is taken when another one closes. */
    if (srv->open >= (uint32_t)srv->lim.max_connections) srv->accept_waiting = true;
    else hs_conn_accept(srv);
}

/* ---- deadlines ---- */

static void on_sweep(uv_timer_t *t)
{
    sw_hsrv *srv = t->data;
    uint64_t now = uv_now(t->loop);
    for (hconn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (now < c->deadline) continue;
        if (c->state == C_READING) hs_conn_fail(c, 408);
        else if (c->state != C_WAITING) hs_conn_close(c); /* idle, or its last answer unread */
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
    hs_settings_init();
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
    if (hs_loop_gone(srv)) return;
    sw_hsrv_retain(srv); /* until libuv is done with it */
    uv_close((uv_handle_t *)&srv->listener, release_handle);
}

void sw_hsrv_drain(sw_hsrv *srv)
{
    srv->draining = true;
    close_listener(srv);
    for (hconn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == C_IDLE) hs_conn_close(c);
    }
}

size_t sw_hsrv_connections(const sw_hsrv *srv) { return srv->open; }

static void free_timer(uv_handle_t *h) { free(h); }

void sw_hsrv_close(sw_hsrv *srv)
{
    if (srv->closed) return;
    srv->closed = true;
    bool gone = hs_loop_gone(srv);
    while (srv->conns) hs_conn_close(srv->conns);
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
