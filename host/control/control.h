/* The control socket (docs/operating.md): a Unix-domain stream socket served by the
 * supervisor's libuv loop, speaking newline-delimited JSON (control_request.h). Created mode
 * 0600 and only the user the host runs as may use it (peer credentials are checked on every
 * connection); another live host on the same path makes the open fail, a stale socket file is
 * replaced, and the file is removed on close. Thread: the loop's. */
#ifndef STEWARD_CONTROL_H
#define STEWARD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "supervisor.h"

typedef struct sw_control sw_control;

/* Limits on clients (docs/operating.md, "Limits"). A client whose replies are not read is
 * not read either once SW_CTL_QUEUE_LOW bytes of replies wait for it, and is dropped when a
 * reply would take it past SW_CTL_QUEUE_MAX (one reply is always taken when none waits). */
#define SW_CTL_MAX_CONNS         64
#define SW_CTL_QUEUE_LOW         ((size_t)1 << 20)
#define SW_CTL_QUEUE_MAX         ((size_t)4 << 20)
/* Defaults of control.idle_timeout and control.request_timeout, in seconds. */
#define SW_CTL_IDLE_TIMEOUT_S    60
#define SW_CTL_REQUEST_TIMEOUT_S 10
/* When all SW_CTL_MAX_CONNS are taken, a new connection closes the one idle longest, if it
 * has been idle this long (ms) with no request pending and no reply waiting. */
#define SW_CTL_EVICT_IDLE_MS     1000
/* The longest a status document of every service is shared (ms) without a change. */
#define SW_CTL_STATUS_MAX_AGE_MS 100

typedef struct sw_control_limits {
    int64_t idle_timeout_ns; /* no request and no reply read for this long: closed */
    int64_t
        request_timeout_ns; /* a request line not finished this long after its first byte: closed */
} sw_control_limits;

/* Listens on path for s; limits NULL: the defaults. NULL with a message in err (another host
 * listens there, the path is too long or is not a socket, bind fails). */
sw_control *sw_control_open(sw_supervisor *s, const char *path, const sw_control_limits *limits,
                            char *err, size_t errlen);
/* Closes every connection and the listener, removes the socket file (if it is still ours)
 * and frees c. Call after the loop has stopped; it runs the loop just enough to close. */
void sw_control_close(sw_control *c);
/* Removes the socket file if it is still ours, and nothing else: for an exit at once (a
 * second signal), which closes nothing. */
void sw_control_remove_file(const sw_control *c);
/* The socket path a host serves for dir (cfg_path, else DIR/.steward.sock), malloc'd. */
char *sw_control_default_path(const char *dir, const char *cfg_path);

#endif
