/* A raw Unix-socket peer for the control specs (the busted interpreter has no sockets):
 *   spec_sock send PATH          stdin to the stream socket, then half-close; the replies to
 *                                stdout until the host closes (10 s at most)
 *   spec_sock dgram PATH SECONDS bind a datagram socket ("@name": abstract); print
 *                                "listening", then each datagram on one line (newlines as
 *                                '|'), until SECONDS pass or a datagram holds STOPPING=1 */
#include <errno.h>
#include <stddef.h>
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

static int do_send(const char *path)
{
    struct sockaddr_un a;
    socklen_t len = address(path, &a);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, len) != 0) {
        fprintf(stderr, "spec_sock: connect %s: %s\n", path, strerror(errno));
        return 1;
    }
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
    while (poll(&p, 1, 10000) > 0 && (n = recv(fd, buf, sizeof buf, 0)) > 0) fwrite(buf, 1, (size_t)n, stdout);
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

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "send") == 0) return do_send(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "dgram") == 0) return do_dgram(argv[2], atof(argv[3]));
    fprintf(stderr, "usage: spec_sock send PATH | spec_sock dgram PATH SECONDS\n");
    return 2;
}
