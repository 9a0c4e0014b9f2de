/* The HTTP server of an http.service (docs/registry.md "http.service"): a listener and its
 * connections on the libuv loop of the worker running the service's process, requests parsed
 * with http-parser, the limits (connections, header and idle timeouts, header and body sizes),
 * keep-alive and pipelining (one request of a connection at a time, answered in order), the
 * responses, and a drain for a graceful stop. It runs no Lua: each complete request is handed
 * to a dispatch callback (lua_api/api_http_server.c routes it and starts its handler), which
 * answers it later with sw_hsrv_respond, named by a token.
 *
 * Ownership: the server belongs to the process that started it, which it pins to its worker
 * (as sockets do, runtime/net.h); sw_hsrv_close (the process's end) closes the listener and
 * every connection. Its memory lives on while tokens hold references, so a late answer finds
 * a closed server rather than freed memory.
 * Thread: everything here runs on the worker that runs the owning process, but sw_hsrv_close
 * and sw_hsrv_release, which may run after the runtime stopped the workers (then on the
 * thread that frees the processes). */
#ifndef STEWARD_HTTP_SERVER_H
#define STEWARD_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net.h"

typedef struct sw_proc sw_proc;
typedef struct sw_hsrv sw_hsrv;

typedef struct sw_hsrv_limits {
    int64_t max_connections;
    int64_t header_timeout_ns, idle_timeout_ns;
    uint64_t max_header_size, max_body_size;
} sw_hsrv_limits;

/* A complete request, valid until it is answered or its connection closes. */
typedef struct sw_hsrv_request {
    const char *method; /* "GET" */
    const char *url;    /* as sent: path and query */
    const char *header; /* n_headers pairs "name\0value\0", names in lower case */
    size_t n_headers;
    const char *body;
    size_t body_len;
    const char *remote; /* "tcp://127.0.0.1:41234" */
} sw_hsrv_request;

/* Names one request of one server (a reference to the server while held). */
typedef struct sw_hsrv_token {
    sw_hsrv *srv;
    uint32_t slot;
    uint64_t seq;
} sw_hsrv_token;

/* A request is complete: answer it (now or later) with sw_hsrv_respond(tok, ...). tok holds no
 * reference: take one with sw_hsrv_retain to keep it past the call. */
typedef void (*sw_hsrv_dispatch_fn)(void *arg, const sw_hsrv_token *tok,
                                    const sw_hsrv_request *req);

/* Listens on a for process p (on p's worker, which must be the calling thread): NULL with *err
 * (a libuv error or SW_NET_ETHREAD) on failure. */
sw_hsrv *sw_hsrv_start(sw_proc *p, const sw_net_addr *a, const sw_hsrv_limits *lim,
                       sw_hsrv_dispatch_fn dispatch, void *arg, int *err);
/* "tcp://127.0.0.1:8080": the address it listens on (port 0 resolved). */
int sw_hsrv_address(sw_hsrv *srv, char *out, size_t len);
/* Stops accepting, closes idle connections, and closes each other one once its request in
 * flight is answered. */
void sw_hsrv_drain(sw_hsrv *srv);
/* Connections open (after a drain: those still serving a request). */
size_t sw_hsrv_connections(const sw_hsrv *srv);
/* Closes the listener and every connection now; the server answers nothing more. Idempotent. */
void sw_hsrv_close(sw_hsrv *srv);

void sw_hsrv_retain(sw_hsrv *srv);
void sw_hsrv_release(sw_hsrv *srv);

/* The request tok names, or NULL when it is answered or gone. */
const sw_hsrv_request *sw_hsrv_request_of(const sw_hsrv_token *tok);
/* Answers the request tok names: status, the header lines `head` ("name: value\r\n" each, as
 * given; content-length and connection are the server's), then body. When head has no
 * content-type one is added: application/json when json, else text/plain. 0, or -1 when the
 * request is answered already or its connection is gone. */
int sw_hsrv_respond(const sw_hsrv_token *tok, int status, const char *head, size_t head_len,
                    const char *body, size_t body_len, bool json);

/* The reason phrase of a status ("Not Found"); "Unknown" for one it does not know. */
const char *sw_hsrv_reason(int status);

#endif
