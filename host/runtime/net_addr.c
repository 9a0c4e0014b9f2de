/* Socket addresses of the `net` module as text: "tcp://HOST:PORT" and "unix://PATH" parsed
 * into libuv's socket addresses (numeric only: no name lookup), formatted back, and the
 * module's error texts. Pure functions. */
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

const char *sw_net_strerror(int err)
{
    switch (err) {
    case UV_EOF: return "closed";
    case SW_NET_ELIMIT: return "too many sockets (at most 1024 per process)";
    case SW_NET_ETHREAD: return "sockets need the worker thread running the process";
    default: return uv_strerror(err);
    }
}

static int bad(char *err, size_t errlen, const char *uri, const char *why)
{
    snprintf(err, errlen, "bad address \"%s\": %s", uri, why);
    return -1;
}

/* "0".."65535", digits only. */
static int parse_port(const char *s, unsigned *port)
{
    if (!*s || strlen(s) > 5) return -1;
    unsigned v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        v = v * 10 + (unsigned)(*s - '0');
    }
    if (v > 65535) return -1;
    *port = v;
    return 0;
}

static int parse_unix(const char *uri, sw_net_addr *a, char *resource, size_t rlen, char *err,
                      size_t errlen)
{
    const char *path = uri + strlen("unix://");
    size_t n = strlen(path);
    if (n == 0) return bad(err, errlen, uri, "no path");
    if (n >= sizeof a->path) return bad(err, errlen, uri, "path too long");
    a->is_unix = true;
    memcpy(a->path, path, n + 1);
    snprintf(resource, rlen, "unix:%s", path);
    return 0;
}

int sw_net_addr_parse(const char *uri, sw_net_addr *a, char *resource, size_t rlen, char *err,
                      size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (strncmp(uri, "unix://", 7) == 0) return parse_unix(uri, a, resource, rlen, err, errlen);
    if (strncmp(uri, "tcp://", 6) != 0)
        return bad(err, errlen, uri, "expected tcp://HOST:PORT or unix://PATH");
    const char *h = uri + 6, *colon;
    char host[64];
    size_t hlen;
    bool v6 = *h == '[';
    if (v6) {
        const char *close = strchr(h, ']');
        if (!close || close[1] != ':') return bad(err, errlen, uri, "expected [IPv6]:PORT");
        hlen = (size_t)(close - h - 1);
        colon = close + 1;
        h++;
    } else {
        colon = strrchr(h, ':');
        if (!colon) return bad(err, errlen, uri, "no port");
        hlen = (size_t)(colon - h);
        if (memchr(h, ':', hlen)) return bad(err, errlen, uri, "an IPv6 address goes in brackets");
    }
    if (hlen == 0 || hlen >= sizeof host) return bad(err, errlen, uri, "expected a host");
    memcpy(host, h, hlen);
    host[hlen] = 0;
    unsigned port;
    if (parse_port(colon + 1, &port) != 0) return bad(err, errlen, uri, "port must be 0-65535");
    int rc =
        v6 ? uv_ip6_addr(host, (int)port, &a->ip.v6)
           : uv_ip4_addr(strcmp(host, "localhost") == 0 ? "127.0.0.1" : host, (int)port, &a->ip.v4);
    if (rc != 0) return bad(err, errlen, uri, "the host must be a numeric IP address or localhost");
    snprintf(resource, rlen, "tcp:%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
    return 0;
}

void sw_net_addr_format(const struct sockaddr *sa, char *out, size_t len)
{
    char ip[64] = "?";
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)sa;
        uv_ip6_name(v6, ip, sizeof ip);
        snprintf(out, len, "tcp://[%s]:%u", ip, (unsigned)ntohs(v6->sin6_port));
    } else if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;
        uv_ip4_name(v4, ip, sizeof ip);
        snprintf(out, len, "tcp://%s:%u", ip, (unsigned)ntohs(v4->sin_port));
    } else {
        snprintf(out, len, "unknown");
    }
}
