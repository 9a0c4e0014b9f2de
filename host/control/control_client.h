/* The client side of the control socket: find the socket, refuse one owned by another user,
 * send one request line and read one reply line. Plain blocking sockets with a deadline. */
#ifndef STEWARD_CONTROL_CLIENT_H
#define STEWARD_CONTROL_CLIENT_H

#include <stddef.h>

/* A connected stream socket to the Unix socket at path (close-on-exec), or -1 with errno
 * (ENAMETOOLONG for a path that does not fit). No checks of who owns it. */
int sw_unix_connect(const char *path);
/* Connects to the host listening on path. The socket fd, or -1 with a message in err
 * ("no host is listening on PATH", an owner that is not the caller, …). */
int sw_ctl_connect(const char *path, char *err, size_t errlen);
/* Sends request (one line, newline added) and returns the reply line without its newline,
 * malloc'd; NULL with err when the host does not answer within timeout_s seconds or the
 * connection fails. */
char *sw_ctl_call(int fd, const char *request, double timeout_s, char *err, size_t errlen);
/* Sends request as one line (newline added). 0, or -1 with err. */
int sw_ctl_send(int fd, const char *request, char *err, size_t errlen);

/* Reads a connection line by line, for replies of many lines (`logs`). */
typedef struct sw_ctl_reader {
    int fd;
    char *buf;
    size_t start, len, cap; /* unread bytes in buf[start, len) */
} sw_ctl_reader;

/* The next line without its newline (NUL-terminated; valid until the next call), waiting at
 * most timeout_s (< 0: as long as it takes); NULL at the end of the stream (err is ""), on
 * timeout or on an error (said in err). Free the reader's buffer with free(r->buf). */
char *sw_ctl_read_line(sw_ctl_reader *r, double timeout_s, char *err, size_t errlen);

#endif
