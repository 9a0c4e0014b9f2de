/* A raw Unix-socket peer for the control specs (the busted interpreter has no sockets); for
 * send, hold and drip PATH may also be "tcp:IPV4:PORT" (the metrics endpoint's specs):
 *   spec_sock send PATH          stdin to the stream socket, then half-close; the replies to
 *                                stdout until the host closes (10 s at most)
 *   spec_sock dgram PATH SECONDS bind a datagram socket ("@name": abstract); print
 *                                "listening", then each datagram on one line (newlines as
 *                                '|'), until SECONDS pass or a datagram holds STOPPING=1
 *   spec_sock flood PATH SECONDS  write {"cmd":"status"} lines and never read, until the host
 *                                closes ("closed AFTER BYTES") or SECONDS pass ("open AFTER BYTES")
 *   spec_sock hold PATH N SECONDS [TEXT...]
 *                                open N connections, the i-th writing TEXT number i mod the count
 *                                (if any); print "connected N", then "closed I AFTER" as the host
 *                                closes each (replies read and dropped), until SECONDS pass or all
 *                                are closed; then "open K"
 *   spec_sock drip PATH TEXT INTERVAL SECONDS
 *                                write TEXT one byte every INTERVAL seconds; print what comes back,
 *                                then "closed AFTER SENT" when the host closes, or "open" */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static socklen_t address(const char *path, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n >= sizeof a->sun_path) {
        fprintf(stderr, "spec_sock: path too long\n");
        exit(2);
    }
    memcpy(a->sun_path, path, n);
    if (path[0] == '@') a->sun_path[0] = 0;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
}

static int connect_to(const char *path);

static int do_send(const char *path)
{
    int fd = connect_to(path);
    char buf[65536];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < n;) {
            ssize_t w = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
            if (w <= 0) break;
            off += w;
        }
    shutdown(fd, SHUT_WR);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 10000) > 0 && (n = recv(fd, buf, sizeof buf, 0)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
    close(fd);
    return 0;
}

static int do_dgram(const char *path, double seconds)
{
    struct sockaddr_un a;
    socklen_t len = address(path, &a);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (path[0] != '@') unlink(path);
    if (bind(fd, (struct sockaddr *)&a, len) != 0) {
        fprintf(stderr, "spec_sock: bind %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left = seconds - ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0) break;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
        if (n < 0) break;
        buf[n] = 0;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] == '\n') buf[i] = '|';
        printf("%s\n", buf);
        fflush(stdout);
        if (strstr(buf, "STOPPING=1")) break;
    }
    if (path[0] != '@') unlink(path);
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* "tcp:IPV4:PORT" as a socket address; false when path is not one. */
static bool tcp_address(const char *path, struct sockaddr_in *a)
{
    const char *colon = strrchr(path, ':');
    char ip[64];
    if (strncmp(path, "tcp:", 4) != 0 || !colon || (size_t)(colon - path - 4) >= sizeof ip)
        return false;
    memcpy(ip, path + 4, (size_t)(colon - path - 4));
    ip[colon - path - 4] = 0;
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, ip, &a->sin_addr) == 1;
}

static int connect_to(const char *path)
{
    struct sockaddr_un a;
    struct sockaddr_in in;
    bool tcp = tcp_address(path, &in);
    socklen_t len = tcp ? (socklen_t)sizeof in : address(path, &a);
    int fd = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, tcp ? (struct sockaddr *)&in : (struct sockaddr *)&a, len) != 0) {
        fprintf(stderr, "spec_sock: connect %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return fd;
}

static int do_flood(const char *path, double seconds)
{
    int fd = connect_to(path);
    static const char req[] = "{\"cmd\":\"status\"}\n";
    char buf[64 * (sizeof req - 1)];
    for (size_t i = 0; i < 64; i++) memcpy(buf + i * (sizeof req - 1), req, sizeof req - 1);
    double t0 = now_s();
    size_t sent = 0;
    while (now_s() - t0 < seconds) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, 50) < 0) break;
        if (p.revents & (POLLHUP | POLLERR)) {
            printf("closed %.3f %zu\n", now_s() - t0, sent);
            return 0;
        }
        if (!(p.revents & POLLOUT)) continue;
        ssize_t w = send(fd, buf, sizeof buf, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            printf("closed %.3f %zu\n", now_s() - t0, sent);
            return 0;
        }
        if (w > 0) sent += (size_t)w;
    }
    printf("open %.3f %zu\n", now_s() - t0, sent);
    return 0;
}

static int do_hold(const char *path, int n, double seconds, char **texts, int n_texts)
{
    struct pollfd *p = calloc((size_t)n, sizeof *p);
    for (int i = 0; i < n; i++) {
        p[i].fd = connect_to(path);
        p[i].events = POLLIN;
        if (n_texts) {
            const char *t = texts[i % n_texts];
            if (send(p[i].fd, t, strlen(t), MSG_NOSIGNAL) < 0)
                fprintf(stderr, "spec_sock: send: %s\n", strerror(errno));
        }
    }
    printf("connected %d\n", n);
    fflush(stdout);
    double t0 = now_s();
    int open = n;
    while (open > 0 && now_s() - t0 < seconds) {
        if (poll(p, (nfds_t)n, 50) <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (p[i].fd < 0 || !p[i].revents) continue;
            char buf[65536];
            ssize_t r = recv(p[i].fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0 || (r < 0 && errno == EAGAIN)) continue;
            printf("closed %d %.3f\n", i, now_s() - t0);
            fflush(stdout);
            close(p[i].fd);
            p[i].fd = -1;
            open--;
        }
    }
    printf("open %d\n", open);
    return 0;
}

static int do_drip(const char *path, const char *text, double interval, double seconds)
{
    int fd = connect_to(path);
    double t0 = now_s(), next = t0;
    size_t sent = 0, n = strlen(text);
    while (now_s() - t0 < seconds) {
        if (sent < n && now_s() >= next) {
            if (send(fd, text + sent, 1, MSG_NOSIGNAL) == 1) sent++;
            next += interval;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0) continue;
        char buf[4096];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0) {
            printf("closed %.3f %zu\n", now_s() - t0, sent);
            return 0;
        }
        fwrite(buf, 1, (size_t)r, stdout);
        fflush(stdout);
    }
    printf("open %zu\n", sent);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "send") == 0) return do_send(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "dgram") == 0) return do_dgram(argv[2], atof(argv[3]));
    if (argc >= 4 && strcmp(argv[1], "flood") == 0) return do_flood(argv[2], atof(argv[3]));
    if (argc >= 5 && strcmp(argv[1], "hold") == 0)
        return do_hold(argv[2], atoi(argv[3]), atof(argv[4]), argv + 5, argc - 5);
    if (argc >= 6 && strcmp(argv[1], "drip") == 0)
        return do_drip(argv[2], argv[3], atof(argv[4]), atof(argv[5]));
    fprintf(stderr, "usage: spec_sock send PATH | dgram PATH SECONDS | flood PATH SECONDS | hold "
                    "PATH N SECONDS [TEXT...] | drip PATH TEXT INTERVAL SECONDS\n");
    return 2;
}
