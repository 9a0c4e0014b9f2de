/* Control socket client (see control_client.h). */
#include "control_client.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int sw_unix_connect(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int sw_ctl_connect(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    struct stat st;
    if (strlen(path) >= sizeof addr.sun_path) {
        snprintf(err, errlen, "control socket path too long: %s", path);
        return -1;
    }
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) snprintf(err, errlen, "no host is listening on %s", path);
        else snprintf(err, errlen, "cannot use %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s is not a socket", path);
        return -1;
    }
    /* a socket someone else made could be anyone's: never send it our requests */
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s belongs to uid %u, not to you (uid %u): not using it", path,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    int fd = sw_unix_connect(path);
    if (fd < 0 && errno == ECONNREFUSED)
        snprintf(err, errlen, "no host is listening on %s (stale socket file)", path);
    else if (fd < 0) snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(errno));
    return fd;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Waits until fd is readable or the deadline passes: 1, 0 on timeout, -1 on error. */
static int wait_readable(int fd, double deadline)
{
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR) continue;
        return rc < 0 ? -1 : rc > 0;
    }
}

int sw_ctl_send(int fd, const char *request, char *err, size_t errlen)
{
    if (send_all(fd, request, strlen(request)) == 0 && send_all(fd, "\n", 1) == 0) return 0;
    snprintf(err, errlen, "cannot send the request: %s", strerror(errno));
    return -1;
}

char *sw_ctl_call(int fd, const char *request, double timeout_s, char *err, size_t errlen)
{
    if (sw_ctl_send(fd, request, err, errlen) != 0) return NULL;
    double deadline = now_s() + timeout_s;
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    while (buf) {
        int ready = wait_readable(fd, deadline);
        if (ready <= 0) {
            snprintf(err, errlen,
                     ready == 0 ? "the host did not answer within %gs" : "poll failed (%g)",
                     timeout_s);
            break;
        }
        if (len + 4096 > cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p) break;
            buf = p;
        }
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            /* a reset: the host closed with our request unread (it was exiting) */
            bool gone = r == 0 || errno == ECONNRESET;
            snprintf(err, errlen, "%s",
                     gone
                         ? "the host closed the connection without an answer (is it shutting down?)"
                         : strerror(errno));
            break;
        }
        char *nl = memchr(buf + len, '\n', (size_t)r);
        len += (size_t)r;
        if (nl) {
            *nl = 0;
            return buf;
        }
    }
    if (!buf) snprintf(err, errlen, "out of memory");
    free(buf);
    return NULL;
}

/* Room for at least 4096 more bytes in r->buf (unread bytes moved to its start); false when
 * memory runs out. */
static bool reader_room(sw_ctl_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start;
        r->start = 0;
    }
    if (r->buf && r->len + 4096 < r->cap) return true;
    size_t cap = r->cap ? r->cap * 2 : 65536;
    char *p = realloc(r->buf, cap);
    if (!p) return false;
    r->buf = p;
    r->cap = cap;
    return true;
}

char *sw_ctl_read_line(sw_ctl_reader *r, double timeout_s, char *err, size_t errlen)
{
    double deadline = timeout_s < 0 ? 0 : now_s() + timeout_s;
    *err = 0;
    for (;;) {
        char *nl = r->buf ? memchr(r->buf + r->start, '\n', r->len - r->start) : NULL;
        if (nl) {
            char *line = r->buf + r->start;
            *nl = 0;
            r->start = (size_t)(nl + 1 - r->buf);
            return line;
        }
        if (!reader_room(r)) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        int ready = timeout_s < 0 ? 1 : wait_readable(r->fd, deadline);
        if (ready <= 0) {
            snprintf(err, errlen,
                     ready == 0 ? "the host did not answer within %gs" : "poll failed (%g)",
                     timeout_s);
            return NULL;
        }
        ssize_t k = recv(r->fd, r->buf + r->len, r->cap - r->len - 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && errno != ECONNRESET) snprintf(err, errlen, "%s", strerror(errno));
        if (k <= 0) return NULL;
        r->len += (size_t)k;
    }
}
