/* HTTP transfers on a worker's loop (see http_client.h): the per-worker multi handle with
 * its polls and timer (libcurl's multi_socket API on libuv), the per-process list that owns
 * transfers and pins the process, the bounded buffers responses land in, the HTTP deliveries
 * that tell the process, and removal at cancel, process end and worker stop. */
#include "http_client.h"

#include <assert.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "mailbox.h"
#include "proc.h"
#include "worker.h"

#define BODY_FIRST (16 * 1024) /* a response buffer starts here, doubling up to its bound */

typedef struct http_poll http_poll;

/* One per worker, made by its first request. */
struct sw_http_multi {
    sw_worker *w;
    CURLM *multi;
    uv_timer_t *timer;   /* its own allocation, handle first (see sw_workers_stop) */
    sw_http_xfer *xfers; /* in flight here (xfer.m_next) */
    http_poll *polls;    /* every socket curl watches */
};

struct http_poll {
    uv_poll_t h; /* first: callbacks get the handle's address */
    curl_socket_t fd;
    sw_http_multi *m;
    http_poll *next, *prev;
};

typedef struct grow_buf {
    char *data;
    size_t len, cap;
} grow_buf;

typedef enum { FAIL_NONE, FAIL_BODY, FAIL_HEADERS } xfer_failure;

struct sw_http_xfer {
    sw_task_wait base;         /* first: the task layer hands this pointer to cancel */
    sw_proc *proc;             /* the owner, with a reference */
    uint64_t id;               /* what its delivery carries */
    sw_http_xfer *next, *prev; /* the process's transfers */
    sw_http_multi *m;          /* while in flight (the process is pinned); NULL after */
    sw_http_xfer *m_next, *m_prev;
    CURL *easy;
    struct curl_slist *headers;
    sw_task *task; /* waiting for it */
    sw_http_finish finish;
    bool done;
    CURLcode result;
    xfer_failure failure;
    long status;
    size_t max_body;
    grow_buf body, head;
};

struct sw_http_owned {
    sw_http_xfer *head;
    size_t n;
    uint64_t next_id;
};

static void free_handle(uv_handle_t *h) { free(h); }

/* ---- buffers ---- */

static bool buf_add(grow_buf *b, const char *data, size_t len, size_t bound)
{
    if (b->len + len > bound) return false;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : BODY_FIRST;
        while (cap < b->len + len) cap *= 2;
        if (cap > bound) cap = bound;
        char *d = realloc(b->data, cap);
        if (!d) return false;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    sw_http_xfer *x = arg;
    if (buf_add(&x->body, data, size * n, x->max_body)) return size * n;
    x->failure = FAIL_BODY;
    return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
}

/* Header lines of every response curl reads (a 100 Continue, each redirect): a status line
 * starts a new set, so the final response's remain. */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    sw_http_xfer *x = arg;
    size_t len = size * n;
    if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        x->head.len = 0;
        return len;
    }
    if (len <= 2 && (data[0] == '\r' || data[0] == '\n')) return len; /* the end of a head */
    if (buf_add(&x->head, data, len, SW_HTTP_MAX_HEADERS)) return len;
    x->failure = FAIL_HEADERS;
    return 0;
}

/* ---- the worker's multi ---- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

bool sw_http_async_dns(void)
{
    pthread_once(&global_once, global_init);
    return (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_ASYNCHDNS) != 0;
}

static void unpin(sw_http_xfer *x) { atomic_fetch_sub(&x->proc->pins, 1); }

/* Takes x out of its multi (curl closes a connection it leaves unfinished). */
static void detach(sw_http_xfer *x)
{
    sw_http_multi *m = x->m;
    if (!m) return;
    curl_multi_remove_handle(m->multi, x->easy);
    curl_easy_cleanup(x->easy);
    x->easy = NULL;
    curl_slist_free_all(x->headers);
    x->headers = NULL;
    if (x->m_prev) x->m_prev->m_next = x->m_next;
    else m->xfers = x->m_next;
    if (x->m_next) x->m_next->m_prev = x->m_prev;
    x->m = NULL;
    unpin(x);
}

/* Finished: tell the process. Its delivery finds x by id, if x still exists then. */
static void finished(sw_http_xfer *x, CURLcode result)
{
    x->result = result;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    detach(x);
    x->done = true;
    sw_delivery *d = sw_delivery_new(SW_DLV_HTTP, 0, x->id, NULL, NULL, 0);
    if (d && !sw_proc_deliver(x->proc, d)) free(d);
}

static void check_done(sw_http_multi *m)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        sw_http_xfer *x = NULL;
        CURLcode result = msg->data.result; /* msg goes with the handle's removal */
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (x) finished(x, result);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    http_poll *hp = (http_poll *)h;
    sw_http_multi *m = hp->m;
    int flags = 0, running;
    if (status < 0) flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(m->multi, hp->fd, flags, &running); /* may close hp */
    check_done(m);
}

static void poll_close(http_poll *hp)
{
    sw_http_multi *m = hp->m;
    if (hp->prev) hp->prev->next = hp->next;
    else m->polls = hp->next;
    if (hp->next) hp->next->prev = hp->prev;
    uv_poll_stop(&hp->h);
    uv_close((uv_handle_t *)&hp->h, free_handle);
}

static int on_socket(CURL *e, curl_socket_t fd, int what, void *arg, void *sockp)
{
    sw_http_multi *m = arg;
    http_poll *hp = sockp;
    (void)e;
    if (what == CURL_POLL_REMOVE) {
        if (hp) poll_close(hp);
        return 0;
    }
    if (!hp) {
        hp = calloc(1, sizeof *hp);
        if (!hp) return -1;
        if (uv_poll_init_socket(&m->w->loop, &hp->h, fd) != 0) {
            free(hp);
            return -1;
        }
        hp->fd = fd;
        hp->m = m;
        hp->next = m->polls;
        if (m->polls) m->polls->prev = hp;
        m->polls = hp;
        curl_multi_assign(m->multi, fd, hp);
    }
    int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&hp->h, ev, on_poll);
    return 0;
}

static void on_timer(uv_timer_t *h)
{
    sw_http_multi *m = h->data;
    int running;
    curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(m);
}

static int on_timer_set(CURLM *multi, long timeout_ms, void *arg)
{
    sw_http_multi *m = arg;
    (void)multi;
    if (timeout_ms < 0) uv_timer_stop(m->timer);
    else
        uv_timer_start(m->timer, on_timer, (uint64_t)timeout_ms,
                       0); /* 0: on the loop's next turn */
    return 0;
}

static sw_http_multi *multi_of(sw_worker *w)
{
    if (w->http) return w->http;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) return NULL;
    sw_http_multi *m = calloc(1, sizeof *m);
    uv_timer_t *t = malloc(sizeof *t);
    CURLM *multi = m && t ? curl_multi_init() : NULL;
    if (!multi) {
        free(t);
        free(m);
        return NULL;
    }
    m->w = w;
    m->multi = multi;
    m->timer = t;
    uv_timer_init(&w->loop, t);
    t->data = m;
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, m);
    return w->http = m;
}

void sw_http_worker_stop(sw_worker *w)
{
    sw_http_multi *m = w->http;
    if (!m) return;
    while (m->xfers) detach(m->xfers); /* their processes free them when discarded */
    curl_multi_cleanup(m->multi);      /* closes cached connections (their polls may go here) */
    while (m->polls) poll_close(m->polls);
    uv_close((uv_handle_t *)m->timer, free_handle);
    free(m);
    w->http = NULL;
}

/* ---- the process's transfers ---- */

size_t sw_http_count(const sw_proc *p) { return p->http ? p->http->n : 0; }

static void xfer_free(sw_http_xfer *x)
{
    detach(x);
    sw_http_owned *o = x->proc->http;
    if (x->prev) x->prev->next = x->next;
    else o->head = x->next;
    if (x->next) x->next->prev = x->prev;
    o->n--;
    free(x->body.data);
    free(x->head.data);
    sw_proc *p = x->proc;
    free(x);
    sw_proc_release(p);
}

static void on_cancel(sw_task_wait *base)
{
    sw_http_xfer *x = (sw_http_xfer *)base;
    x->task = NULL;
    xfer_free(x);
}

static void fail(char *err, size_t errlen, const char *msg) { snprintf(err, errlen, "%s", msg); }

/* The method: GET and POST as curl knows them, HEAD without a body, any other as given. */
static void set_method(CURL *e, const sw_http_request *r)
{
    bool get = strcmp(r->method, "GET") == 0, post = strcmp(r->method, "POST") == 0;
    if (strcmp(r->method, "HEAD") == 0) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    else if (get && !r->body) curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else if (post || r->body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(r->body ? r->body_len : 0));
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, r->body ? r->body : "");
    }
    if (!get && !post && strcmp(r->method, "HEAD") != 0)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    else if (get && r->body) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "GET");
}

static bool set_options(sw_http_xfer *x, const sw_http_request *r)
{
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, r->follow_redirects ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)SW_HTTP_MAX_REDIRECTS);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)r->timeout_ms);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                     (curl_off_t)r->max_body); /* a Content-Length past it fails early */
    curl_easy_setopt(e, CURLOPT_PROXY, "");    /* no proxy from the environment */
    /* A transfer removed while the threaded resolver still works detaches its thread rather
     * than waiting for it (which would block the loop). */
    curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    set_method(e, r);
    bool expect = false;
    for (size_t i = 0; i < r->n_headers; i++) {
        struct curl_slist *l = curl_slist_append(x->headers, r->headers[i]);
        if (!l) return false;
        x->headers = l;
        expect = expect || strncasecmp(r->headers[i], "expect:", 7) == 0;
    }
    if (!expect) { /* a body goes at once: no waiting for a "100 Continue" */
        struct curl_slist *l = curl_slist_append(x->headers, "Expect:");
        if (!l) return false;
        x->headers = l;
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    return true;
}

sw_http_xfer *sw_http_start(sw_proc *p, const sw_http_request *req, char *err, size_t errlen)
{
    sw_worker *w = sw_worker_current();
    if (!w || w != p->worker) {
        fail(err, errlen, "http needs the process's worker thread");
        return NULL;
    }
    sw_http_owned *o = p->http ? p->http : (p->http = calloc(1, sizeof *p->http));
    if (!o) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    if (o->n >= SW_HTTP_MAX_INFLIGHT) {
        snprintf(err, errlen, "too many requests (at most %d per process)", SW_HTTP_MAX_INFLIGHT);
        return NULL;
    }
    sw_http_multi *m = multi_of(w);
    if (!m) {
        fail(err, errlen, "the HTTP client could not start");
        return NULL;
    }
    sw_http_xfer *x = calloc(1, sizeof *x);
    if (x) x->easy = curl_easy_init();
    if (!x || !x->easy || !set_options(x, req)) {
        if (x && x->easy) curl_easy_cleanup(x->easy);
        if (x) curl_slist_free_all(x->headers);
        free(x);
        fail(err, errlen, "out of memory");
        return NULL;
    }
    x->max_body = req->max_body;
    CURLMcode rc = curl_multi_add_handle(m->multi, x->easy);
    if (rc != CURLM_OK) {
        curl_easy_cleanup(x->easy);
        curl_slist_free_all(x->headers);
        free(x);
        fail(err, errlen, curl_multi_strerror(rc));
        return NULL;
    }
    x->proc = p;
    sw_proc_retain(p);
    atomic_fetch_add(&p->pins, 1);
    x->id = ++o->next_id;
    x->next = o->head;
    if (o->head) o->head->prev = x;
    o->head = x;
    o->n++;
    x->m = m;
    x->m_next = m->xfers;
    if (m->xfers) m->xfers->m_prev = x;
    m->xfers = x;
    return x;
}

sw_task_wait *sw_http_wait(sw_http_xfer *x, sw_task *t, sw_http_finish finish)
{
    x->task = t;
    x->finish = finish;
    x->base.cancel = on_cancel;
    return &x->base;
}

const char *sw_http_error(const sw_http_xfer *x)
{
    if (x->failure == FAIL_BODY || x->result == CURLE_FILESIZE_EXCEEDED)
        return "response too large";
    if (x->failure == FAIL_HEADERS) return "response headers too large";
    if (x->result == CURLE_OK) return NULL;
    if (x->result == CURLE_OPERATION_TIMEDOUT) return "timeout";
    return curl_easy_strerror(x->result);
}

long sw_http_status(const sw_http_xfer *x) { return x->status; }

const char *sw_http_body(const sw_http_xfer *x, size_t *len)
{
    *len = x->body.len;
    return x->body.data ? x->body.data : "";
}

const char *sw_http_headers(const sw_http_xfer *x, size_t *len)
{
    *len = x->head.len;
    return x->head.data ? x->head.data : "";
}

void sw_http_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    sw_http_xfer *x = p->http ? p->http->head : NULL;
    while (x && x->id != d->ref) x = x->next;
    if (!x || !x->done || !x->task) return; /* its task was freed meanwhile */
    int n = x->finish(x, L);
    sw_task *t = x->task;
    x->task = NULL;
    sw_task_wake(t, L, n);
    xfer_free(x);
}

void sw_http_proc_end(sw_proc *p)
{
    sw_http_owned *o = p->http;
    if (!o) return;
    while (o->head) xfer_free(o->head);
    free(o);
    p->http = NULL;
}
