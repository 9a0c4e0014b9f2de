/* The sd_notify datagram sender (see notify.h). */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct sw_notify {
    int fd;
    struct sockaddr_un addr;
    socklen_t addr_len;
    char last[32]; /* the last state sent, to drop repeats */
    sw_log *log;
};

static void warn(sw_log *log, const char *msg, const char *detail)
{
    sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = detail};
    sw_log_write(log, SW_LOG_WARN, NULL, msg, &f, 1);
}

sw_notify *sw_notify_from_env(sw_log *log)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path) return NULL;
    size_t n = strlen(path);
    sw_notify *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->log = log;
    s->addr.sun_family = AF_UNIX;
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof s->addr.sun_path) {
        warn(log, "NOTIFY_SOCKET ignored",
             "not an absolute path or @abstract name of at most 107 bytes");
        free(s);
        return NULL;
    }
    memcpy(s->addr.sun_path, path, n);
    if (path[0] == '@') s->addr.sun_path[0] = 0; /* abstract: leading NUL, length counts exactly */
    s->addr_len =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
    s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        warn(log, "NOTIFY_SOCKET ignored", strerror(errno));
        free(s);
        return NULL;
    }
    return s;
}

static void send_datagram(sw_notify *s, const char *msg)
{
    ssize_t w;
    do w = sendto(s->fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&s->addr, s->addr_len);
    while (w < 0 && errno == EINTR);
    if (w < 0) warn(s->log, "sd_notify failed", strerror(errno));
}

int64_t sw_notify_watchdog_ns(void)
{
    const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    if (!usec || !*usec) return 0;
    if (pid && *pid && strtoll(pid, NULL, 10) != (long long)getpid()) return 0; /* not ours */
    char *end;
    long long us = strtoll(usec, &end, 10);
    return *end || us <= 0 ? 0 : (int64_t)us * 1000;
}

void sw_notify_watchdog(sw_notify *s)
{
    if (s) send_datagram(s, "WATCHDOG=1"); /* every time: no repeat is dropped */
}

void sw_notify_send(void *arg, const char *state)
{
    sw_notify *s = arg;
    if (!s || strcmp(s->last, state) == 0) return;
    snprintf(s->last, sizeof s->last, "%s", state);
    char msg[128];
    if (strcmp(state, "RELOADING=1") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(msg, sizeof msg, "%s\nMONOTONIC_USEC=%llu", state,
                 (unsigned long long)ts.tv_sec * 1000000ULL +
                     (unsigned long long)ts.tv_nsec / 1000);
    } else snprintf(msg, sizeof msg, "%s", state);
    send_datagram(s, msg);
    sw_log_field f = {.key = "state", .type = SW_LF_STR, .s = state};
    sw_log_write(s->log, SW_LOG_DEBUG, NULL, "sd_notify", &f, 1);
}

void sw_notify_free(sw_notify *s)
{
    if (!s) return;
    close(s->fd);
    free(s);
}
