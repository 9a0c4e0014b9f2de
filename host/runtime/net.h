/* Sockets of processes (the `net` module: TCP and unix-domain streams) on the libuv loop of
 * the worker running their process. A process owning a socket is pinned to that worker
 * (sw_proc.pins: worker.c never steals it), so its Lua code, the socket's libuv callbacks and
 * everything here run on one thread, without locks. Whatever happens on a socket (bytes in, a
 * connection to accept, writes drained, a connect done, a wait's timeout) becomes an IO
 * delivery to the process (ref = the socket's id; at most one in flight per socket), which
 * sw_net_dispatch handles in the process's slice: the tasks waiting on that socket check
 * whether their call can complete now. Bytes wait in the socket's bounded buffer, not in
 * deliveries. The process owns its sockets: sw_net_proc_end closes what it left open.
 * Thread: everything here runs on the worker running the owning process. */
#ifndef STEWARD_NET_H
#define STEWARD_NET_H

#include <lua.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "task.h"

typedef struct sw_proc sw_proc;
typedef struct sw_delivery sw_delivery;
typedef struct sw_sock sw_sock;

#define SW_NET_MAX_SOCKETS 1024 /* per process: listeners, connections, connects under way */
#define SW_NET_READ_BUFFER \
    (64 * 1024)                        /* per connection: unread bytes held before it stops
                                        * reading from the kernel (backpressure); also the
                                        * longest line read_line returns */
#define SW_NET_WRITE_QUEUE (64 * 1024) /* per connection: bytes queued beyond which a write waits */
#define SW_NET_BACKLOG     511         /* listen(2) backlog */

/* Errors beyond libuv's (negative, as libuv's are). */
#define SW_NET_ELIMIT  (-100001) /* the process has SW_NET_MAX_SOCKETS sockets */
#define SW_NET_ETHREAD (-100002) /* not called on the worker running the process */

/* ---- addresses (net_addr.c): pure functions, any thread ---- */

typedef struct sw_net_addr {
    bool is_unix;
    union {
        struct sockaddr sa;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } ip;
    char path[108]; /* unix: the socket file (sizeof sockaddr_un.sun_path) */
} sw_net_addr;

/* Parses "tcp://HOST:PORT" (HOST a numeric IPv4 address, "[IPv6]" or "localhost"; PORT
 * 0-65535) or "unix://PATH" ("unix:///run/x.sock": absolute; "unix://x.sock": relative).
 * Writes the resource its guard checks: "tcp:HOST:PORT" (HOST as written, brackets kept) or
 * "unix:PATH". 0, or -1 with a message in err. */
int sw_net_addr_parse(const char *uri, sw_net_addr *a, char *resource, size_t rlen, char *err,
                      size_t errlen);
/* "tcp://127.0.0.1:8080" or "tcp://[::1]:8080" for an IPv4 or IPv6 socket address. */
void sw_net_addr_format(const struct sockaddr *sa, char *out, size_t len);

/* "closed" for UV_EOF, the texts of SW_NET_E*, else libuv's text ("connection refused"). */
const char *sw_net_strerror(int err);

/* ---- sockets ---- */

/* Creating a socket counts it against the process's limit and pins the process. NULL with
 * *err (a libuv error, SW_NET_ELIMIT or SW_NET_ETHREAD) on failure. */
sw_sock *sw_net_listen(sw_proc *p, const sw_net_addr *a, int *err);
/* Starts a connect; sw_net_connected tells when it is done. */
sw_sock *sw_net_connect(sw_proc *p, const sw_net_addr *a, int *err);
/* 1 once connected (reading has started), 0 while under way, or the error. */
int sw_net_connected(sw_sock *s);
/* A listener's next connection: 0 with *out (a new connected socket of the same process),
 * 0 with *out NULL when none is pending (the kernel's backlog holds them until accepted), or
 * an error (a connection that cannot be taken stays pending). */
int sw_net_accept(sw_sock *listener, sw_sock **out);

/* The unread bytes (at most SW_NET_READ_BUFFER). */
const char *sw_net_peek(sw_sock *s, size_t *len);
/* Drops the first n unread bytes; reading from the kernel resumes once there is room. */
void sw_net_consume(sw_sock *s, size_t n);
/* 0 while more bytes may come, UV_EOF after the peer closed, or a read error. Bytes already
 * read stay readable after either. */
int sw_net_read_end(sw_sock *s);
/* Writes or queues len bytes (copied): 0 when they are handed to the kernel or queued within
 * SW_NET_WRITE_QUEUE, 1 when queued beyond it (wait for sw_net_drained), or an error (also
 * an earlier write's, which every later write returns). */
int sw_net_write(sw_sock *s, const char *data, size_t len);
/* all: 1 when nothing is queued; else 1 when the queue is within SW_NET_WRITE_QUEUE. 0 while
 * not, or the write error. */
int sw_net_drained(sw_sock *s, bool all);

/* "tcp://..." / "unix://..." of the socket's own (peer = false) or peer's address: 0, or a
 * libuv error. */
int sw_net_name(sw_sock *s, bool peer, char *out, size_t len);
bool sw_net_is_unix(const sw_sock *s);
/* The process owning s; NULL once closed. */
sw_proc *sw_net_owner(const sw_sock *s);
/* False once closed or closing (sw_net_close_begin). */
bool sw_net_usable(const sw_sock *s);
/* True once sw_net_close ran (it stays valid memory until the loop's next turn). */
bool sw_net_closed(const sw_sock *s);

/* The Lua object holding s keeps its pointer at *ref: set to NULL when s closes. */
void sw_net_bind(sw_sock *s, sw_sock **ref);
/* The object lets go (conn:close()): *ref is cleared, the socket is no longer usable, and
 * tasks waiting on it get their call's "closed" result (needs L, the process's state). The
 * caller then flushes and closes it. */
void sw_net_close_begin(sw_sock *s, lua_State *L);
/* Closes s now: waiting tasks get "closed" (when L is given; else their waits are only
 * disarmed), queued writes are dropped, a unix listener's file is removed, the process's
 * count drops. Idempotent. */
void sw_net_close(sw_sock *s, lua_State *L);

/* ---- blocking calls: the five steps (lua_api/api_net.c) ----
 * A socket has two sides, each with at most one waiting task: IN (read*, accept) and OUT
 * (write, connect, close's flush). A call checks first (runs its step); if that cannot
 * complete it arms the side's wait (task, step, timeout, and the cancel the task layer calls
 * if the task is freed) and yields with sw_task_block(L, &w->base). At each IO delivery the
 * step runs again; once it pushes results the task resumes with them. */

typedef enum { SW_NET_IN, SW_NET_OUT } sw_net_side;

typedef struct sw_net_wait sw_net_wait;
/* Pushes the call's results on L and returns how many, or returns -1 to keep waiting (never
 * when give_up: the timeout passed, or the call had none to wait with). May raise (memory). */
typedef int (*sw_net_step)(sw_net_wait *w, lua_State *L, bool give_up);

typedef struct sw_net_timer sw_net_timer;

struct sw_net_wait {
    sw_task_wait base; /* first: the task layer hands this pointer to cancel */
    sw_sock *sock;
    sw_task *task; /* blocked here; NULL: nobody waits on this side */
    sw_net_step step;
    size_t n, got;    /* the call's own state (api_net.c) */
    int parts;        /* read_exact: registry ref of the pieces taken so far */
    bool close_after; /* set by a step: close the socket once its results are out */
    bool timed_out;
    sw_net_timer *timer; /* made on first use, closed with the socket */
};

/* The side's wait record: busy while ->task is set; the caller fills step, n, got, parts. */
sw_net_wait *sw_net_waiter(sw_sock *s, sw_net_side side);
/* Arms w for task t: its step runs at each IO delivery for the socket; timeout_ns < 0: none. */
void sw_net_arm(sw_net_wait *w, sw_task *t, int64_t timeout_ns);

/* ---- the process's side ---- */

/* An IO delivery (mailbox.c): settles the waits of the socket it names, if it still exists.
 * Runs inside the process's Lua state (may raise: memory). */
void sw_net_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d);
/* The process ended (its tasks are freed, its Lua state not yet): closes every socket it
 * still owns, also after the runtime stopped its workers' loops. */
void sw_net_proc_end(sw_proc *p);
/* How many sockets p owns. */
size_t sw_net_count(const sw_proc *p);

#endif
