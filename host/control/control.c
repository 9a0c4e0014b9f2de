/* The control socket's transport (see control.h): the listening pipe, one record per client
 * connection, line framing with a length cap, peer-credential checks, and replies (JSON values
 * from control_ops.c, written as lines by json.h) in request order. What a request does is
 * control_ops.c's business. */
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control_ops.h"
#include "control_request.h"
#include "json.h"

#define MAX_CONNS 64

typedef struct ctl_conn ctl_conn;

/* Bytes kept aside. */
typedef struct backlog {
    char *p;
    size_t len, cap;
} backlog;

struct sw_control {
    uv_pipe_t server;
    sw_supervisor *sup;
    char *path;
    dev_t dev;
    ino_t ino;
    uint64_t start;
    ctl_conn *conns;
    size_t n_conns;
    int open_handles;        /* handles not yet closed (for sw_control_close) */
    char readbuf[65536];     /* reads are handled one at a time on the loop: one buffer serves all */
};

struct ctl_conn {
    uv_pipe_t pipe;
    uv_timer_t deadline;     /* a pending request's timeout */
    int handles;             /* of pipe and deadline, not yet closed */
    sw_control *ctl;
    ctl_conn *next, **link;
    char line[SW_CTL_MAX_LINE + 1];
    size_t len;
    bool discarding;         /* inside an oversized line: skip to its newline */
    bool eof, closing;
    bool pending;            /* a start/stop/restart waits for its outcome: answered when the
                                supervisor tells of a change (on_change) or at its deadline */
    sw_ctl_op op;
    backlog backlog;         /* bytes read after a pending request's line */
};

/* ---- closing ---- */

static void on_handle_closed(uv_handle_t *h)
{
    sw_control *c = h->data;
    c->open_handles--;
}

static void on_conn_closed(uv_handle_t *h)
{
    ctl_conn *k = h->data;
    k->ctl->open_handles--;
    if (--k->handles) return;
    sw_ctl_op_free(&k->op);
    free(k->backlog.p);
    free(k);
}

static void close_conn(ctl_conn *k)
{
    if (k->closing) return;
    k->closing = true;
    *k->link = k->next;
    if (k->next) k->next->link = k->link;
    k->ctl->n_conns--;
    uv_close((uv_handle_t *)&k->pipe, on_conn_closed);
    uv_close((uv_handle_t *)&k->deadline, on_conn_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    close_conn(req->data);
    free(req);
}

/* After the client's end of input: close once what was written has gone out. */
static void finish_conn(ctl_conn *k)
{
    if (k->closing) return;
    uv_shutdown_t *req = malloc(sizeof *req);
    if (!req || uv_shutdown(req, (uv_stream_t *)&k->pipe, on_shutdown) != 0) {
        free(req);
        close_conn(k);
        return;
    }
    req->data = k;
}

/* ---- replies ---- */

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a client that went away: nothing to tell */
    free(req->data);
    free(req);
}

/* Sends the reply as one line and releases it. A reply that could not be built or written
 * out (NULL: memory ran out) is replaced by an "out of memory" error, if that can be. */
static void send_reply(ctl_conn *k, json_t *reply)
{
    size_t len;
    char *text = sw_json_dump(reply, true, &len);
    json_decref(reply);
    if (!text) {
        json_t *oom = sw_ctl_error_reply("out of memory");
        text = sw_json_dump(oom, true, &len);
        json_decref(oom);
    }
    uv_write_t *req = malloc(sizeof *req);
    if (!req || !text || k->closing) {
        free(req);
        free(text);
        return;
    }
    uv_buf_t buf = uv_buf_init(text, (unsigned)len);
    req->data = text; /* the request owns the text now */
    if (uv_write(req, (uv_stream_t *)&k->pipe, &buf, 1, on_written) != 0) {
        free(req->data);
        free(req);
        close_conn(k);
    }
}

static void send_error(ctl_conn *k, const char *msg) { send_reply(k, sw_ctl_error_reply(msg)); }

/* ---- requests ---- */

static void feed(ctl_conn *k, const char *p, size_t n);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void arm_deadline(ctl_conn *k);

static void handle_line(ctl_conn *k)
{
    size_t n = k->len;
    k->len = 0;
    while (n && (k->line[n - 1] == '\r' || k->line[n - 1] == ' ')) n--;
    if (n == 0) return; /* blank lines are ignored */
    json_t *reply;
    sw_ctl_op_free(&k->op);
    if (sw_ctl_op_begin(&k->op, k->ctl->sup, k->ctl->start, k->line, n, &reply)) {
        send_reply(k, reply);
        return;
    }
    k->pending = true; /* the reply comes with a change or at the deadline; read no more until then */
    uv_read_stop((uv_stream_t *)&k->pipe);
    arm_deadline(k);
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
            close_conn(k);
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Splits bytes into lines; stops at a pending request and keeps the rest for later. */
static void feed(ctl_conn *k, const char *p, size_t n)
{
    while (n && !k->closing) {
        if (k->pending) {
            keep(k, p, n);
            return;
        }
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (k->discarding) {
            k->discarding = !nl;
        } else if (k->len + take > SW_CTL_MAX_LINE) {
            send_error(k, "request too long (more than 4096 bytes): ignored");
            k->len = 0;
            k->discarding = !nl;
        } else {
            memcpy(k->line + k->len, p, take);
            k->len += take;
            if (nl) handle_line(k);
        }
        p += take + (nl ? 1 : 0);
        n -= take + (nl ? 1 : 0);
    }
}

/* A pending request got its reply: go on with what the client sent after it. */
static void resume(ctl_conn *k)
{
    k->pending = false;
    backlog rest = k->backlog;
    k->backlog = (backlog){0};
    feed(k, rest.p, rest.len);
    free(rest.p);
    if (k->closing || k->pending) return;
    if (k->eof) finish_conn(k);
    else uv_read_start((uv_stream_t *)&k->pipe, on_alloc, on_read);
}

/* Answers k's pending request if its services settled or its deadline passed. */
static bool try_answer(ctl_conn *k)
{
    json_t *reply;
    if (!sw_ctl_op_poll(&k->op, k->ctl->sup, &reply)) return false;
    uv_timer_stop(&k->deadline);
    send_reply(k, reply);
    resume(k);
    return true;
}

/* The supervisor's change subscriber: called at the end of an entry point that changed a
 * service or group. A request made from here (resume reads the next line) is told of by a
 * further call. */
static void on_change(void *arg)
{
    sw_control *c = arg;
    for (ctl_conn *k = c->conns, *next; k; k = next) {
        next = k->next;
        if (k->pending) try_answer(k);
    }
}

static void on_deadline(uv_timer_t *t)
{
    ctl_conn *k = t->data;
    if (k->pending && !try_answer(k)) arm_deadline(k); /* fired a little early */
}

static void arm_deadline(ctl_conn *k)
{
    uint64_t now = uv_hrtime(), left = k->op.deadline > now ? k->op.deadline - now : 0;
    uv_timer_start(&k->deadline, on_deadline, left / 1000000 + 1, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    ctl_conn *k = h->data;
    *buf = uv_buf_init(k->ctl->readbuf, sizeof k->ctl->readbuf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    ctl_conn *k = stream->data;
    if (nread > 0) {
        feed(k, buf->base, (size_t)nread);
        return;
    }
    if (nread == 0) return;
    k->eof = true; /* end of input or an error: answer what is pending, then close */
    uv_read_stop(stream);
    if (nread != UV_EOF) close_conn(k);
    else if (!k->pending) finish_conn(k);
}

/* ---- connections ---- */

/* Only the user the host runs as may control it. */
static bool peer_allowed(ctl_conn *k, char *why, size_t size)
{
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno((uv_handle_t *)&k->pipe, &fd) != 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        snprintf(why, size, "cannot read the peer's credentials");
        return false;
    }
    if (cred.uid == geteuid()) return true;
    snprintf(why, size, "permission denied: uid %u may not control this host (it runs as uid %u)",
             (unsigned)cred.uid, (unsigned)geteuid());
    return false;
}

static void on_connection(uv_stream_t *server, int status)
{
    sw_control *c = server->data;
    if (status < 0) return;
    ctl_conn *k = calloc(1, sizeof *k);
    if (!k) return;
    k->ctl = c;
    uv_pipe_init(server->loop, &k->pipe, 0);
    k->pipe.data = k;
    uv_timer_init(server->loop, &k->deadline);
    k->deadline.data = k;
    k->handles = 2;
    c->open_handles += 2;
    k->next = c->conns;
    if (c->conns) c->conns->link = &k->next;
    k->link = &c->conns;
    c->conns = k;
    c->n_conns++;
    if (uv_accept(server, (uv_stream_t *)&k->pipe) != 0) {
        close_conn(k);
        return;
    }
    char why[160];
    if (c->n_conns > MAX_CONNS) snprintf(why, sizeof why, "too many control connections (%d)", MAX_CONNS);
    if (c->n_conns > MAX_CONNS || !peer_allowed(k, why, sizeof why)) {
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = why};
        sw_log_write(c->sup->log, SW_LOG_WARN, NULL, "control connection refused", &f, 1);
        send_error(k, why);
        finish_conn(k);
        return;
    }
    uv_read_start((uv_stream_t *)&k->pipe, on_alloc, on_read);
}

/* ---- the socket file ---- */

/* Makes path free to bind: refuses a live host and anything that is not a socket, removes a
 * stale socket file. 0 or -1 with err. */
static int claim_path(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        snprintf(err, errlen, "control socket path too long (at most %zu bytes): %s", sizeof addr.sun_path - 1, path);
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot use control socket %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket: not replacing it", path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int rc = connect(fd, (struct sockaddr *)&addr, sizeof addr);
    int e = errno;
    close(fd);
    if (rc == 0) {
        snprintf(err, errlen, "another host is already listening on %s", path);
        return -1;
    }
    if (e != ECONNREFUSED && e != ENOENT) {
        snprintf(err, errlen, "cannot use control socket %s: %s", path, strerror(e));
        return -1;
    }
    unlink(path); /* stale: its host is gone */
    return 0;
}

static int listen_on(sw_control *c, const char *path, char *err, size_t errlen)
{
    uv_pipe_init(c->sup->loop, &c->server, 0);
    c->server.data = c;
    c->open_handles++;
    mode_t old = umask(0177); /* created 0600: never a moment when others may connect */
    int rc = uv_pipe_bind(&c->server, path);
    umask(old);
    struct stat st;
    if (rc == 0 && (chmod(path, 0600) != 0 || stat(path, &st) != 0)) rc = uv_translate_sys_error(errno);
    if (rc == 0) {
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        rc = uv_listen((uv_stream_t *)&c->server, 32, on_connection);
    }
    if (rc != 0) snprintf(err, errlen, "cannot listen on %s: %s", path, uv_strerror(rc));
    return rc;
}

char *sw_control_default_path(const char *dir, const char *cfg_path)
{
    if (cfg_path) return strdup(cfg_path);
    const char *d = dir && *dir ? dir : ".";
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/') n--;
    char *p = malloc(n + sizeof "/.steward.sock");
    if (p) sprintf(p, "%.*s/.steward.sock", (int)n, d);
    return p;
}

sw_control *sw_control_open(sw_supervisor *s, const char *path, char *err, size_t errlen)
{
    if (claim_path(path, err, errlen) != 0) return NULL;
    sw_control *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->sup = s;
    c->start = uv_hrtime();
    if (listen_on(c, path, err, errlen) != 0) {
        sw_control_close(c);
        return NULL;
    }
    sw_supervisor_on_change(s, on_change, c);
    sw_log_field f = {.key = "socket", .type = SW_LF_STR, .s = path};
    sw_log_write(s->log, SW_LOG_INFO, NULL, "control socket", &f, 1);
    return c;
}

void sw_control_remove_file(const sw_control *c)
{
    struct stat st;
    if (c && c->ino && lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino) unlink(c->path);
}

void sw_control_close(sw_control *c)
{
    if (!c) return;
    sw_supervisor_on_change(c->sup, NULL, NULL);
    for (ctl_conn *k = c->conns; k; k = k->next) /* a short reply is written at once, before the close */
        if (k->pending) send_error(k, "the host shut down before the operation finished");
    while (c->conns) close_conn(c->conns);
    uv_close((uv_handle_t *)&c->server, on_handle_closed);
    /* other handles (the supervisor's) keep the loop alive: turn it only until ours are gone */
    for (int i = 0; i < 1000 && c->open_handles > 0; i++) uv_run(c->sup->loop, UV_RUN_NOWAIT);
    sw_control_remove_file(c);
    free(c->path);
    free(c);
}
