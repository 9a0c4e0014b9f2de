/* HTTP requests of processes (the `http` module) on libcurl's multi interface, driven by the
 * libuv loop of the worker running the process: one CURLM per worker (made on first use,
 * destroyed by sw_http_worker_stop), a uv_poll_t per socket curl watches and a uv_timer_t for
 * curl's timeout. A process with transfers in flight is pinned to its worker (sw_proc.pins,
 * shared with net.c), so its Lua code, curl's callbacks and everything here run on one thread.
 * A finished transfer becomes an HTTP delivery to the process (ref = the transfer's id), which
 * sw_http_dispatch hands to the waiting task. The process owns its transfers: a task freed
 * while waiting (kill, process end) removes its transfer at once (its cancel), and
 * sw_http_proc_end removes any left. Name resolution uses curl's threaded resolver (Debian's
 * libcurl is built with AsynchDNS), so no lookup blocks the loop.
 * Thread: everything here runs on the worker running the owning process. */
#ifndef STEWARD_HTTP_CLIENT_H
#define STEWARD_HTTP_CLIENT_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"

typedef struct sw_proc sw_proc;
typedef struct sw_delivery sw_delivery;
typedef struct sw_worker sw_worker;
typedef struct sw_http_xfer sw_http_xfer;

#define SW_HTTP_MAX_INFLIGHT  64                  /* per process */
#define SW_HTTP_MAX_BODY      (16u * 1024 * 1024) /* response body, unless the request says */
#define SW_HTTP_MAX_HEADERS   (64 * 1024)         /* response header bytes */
#define SW_HTTP_TIMEOUT_MS    30000               /* the whole transfer, unless the request says */
#define SW_HTTP_MAX_REDIRECTS 5                   /* when follow_redirects is set */

typedef struct sw_http_request {
    const char *method;         /* an HTTP token: "GET", "POST", "PUT", ... */
    const char *url;            /* http:// or https:// (curl refuses other protocols) */
    const char *const *headers; /* "Name: value" lines (no CR or LF), n_headers of them */
    size_t n_headers;
    const char *body; /* sent as is when set (copied); NULL: none */
    size_t body_len;
    int64_t timeout_ms; /* > 0 */
    size_t max_body;    /* > 0 */
    bool follow_redirects;
} sw_http_request;

/* What a finished transfer pushes onto the waiting task's stack (api_http.c): returns how many
 * values. May raise (memory); the transfer stays owned by the process then. */
typedef int (*sw_http_finish)(sw_http_xfer *x, lua_State *L);

/* Starts a transfer for p on the current worker (which must run p), counting it against
 * SW_HTTP_MAX_INFLIGHT and pinning p. NULL with a message in err on failure. */
sw_http_xfer *sw_http_start(sw_proc *p, const sw_http_request *req, char *err, size_t errlen);
/* Arms x for task t: once it finishes, finish runs at the delivery and t resumes with its
 * results. Returns the wait to give sw_task_block: its cancel removes and frees x. */
sw_task_wait *sw_http_wait(sw_http_xfer *x, sw_task *t, sw_http_finish finish);

/* ---- a finished transfer, for finish ---- */

/* NULL on success, else the error: "timeout", "response too large", or curl's text. */
const char *sw_http_error(const sw_http_xfer *x);
long sw_http_status(const sw_http_xfer *x);
const char *sw_http_body(const sw_http_xfer *x, size_t *len);
/* The final response's header lines ("Name: value\r\n" each, no status line). */
const char *sw_http_headers(const sw_http_xfer *x, size_t *len);

/* ---- the process's and worker's side ---- */

/* An HTTP delivery (mailbox.c): wakes the task waiting on the transfer it names and frees the
 * transfer, if both still exist. Runs inside the process's Lua state (may raise: memory). */
void sw_http_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d);
/* The process ended (its tasks are freed): removes and frees every transfer it still owns,
 * also after the runtime stopped its workers. */
void sw_http_proc_end(sw_proc *p);
/* How many transfers p owns. */
size_t sw_http_count(const sw_proc *p);
/* The worker stops (sw_workers_stop, before it closes the loop's handles): removes every
 * transfer from its multi (their processes free them later), then closes the multi, its
 * polls and its timer. Thread: the one stopping the workers, once w's thread has ended. */
void sw_http_worker_stop(sw_worker *w);
/* Whether this libcurl resolves names off the calling thread (CURL_VERSION_ASYNCHDNS). */
bool sw_http_async_dns(void);

#endif
