/* Network benchmarks, each beside a baseline measured in the same run: TCP echo round trips
 * (64-byte messages, write then read_exact) over one connection and over 100 at once, between
 * an echo server process (a task per connection) and a client process (a task per
 * connection), against the same echo in plain C on one libuv loop over loopback (server and
 * clients on one thread). Steward runs with one worker (both processes on one thread, like
 * the baseline) and with two.
 *   bench_net [TRIPS_ONE [TRIPS_EACH_OF_100]]   (defaults 20000 and 500) */
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "bench_util.h"
#include "api.h"
#include "bench_process.h"
#include "runtime.h"

#define MSG 64

static const char app[] =
    "namespace: b\n"
    "entries:\n"
    "  - name: echo\n    kind: process.lua\n    source: |\n"
    "      return function(parent)\n"
    "        local l = assert(net.listen('tcp://127.0.0.1:0'))\n"
    "        process.send(parent, 'addr', l:addr())\n"
    "        while true do\n"
    "          local c = l:accept()\n"
    "          if not c then return end\n"
    "          coroutine.spawn(function()\n"
    "            while true do\n"
    "              local s = c:read(65536)\n"
    "              if not s then break end\n"
    "              c:write(s)\n"
    "            end\n"
    "            c:close()\n"
    "          end)\n"
    "        end\n"
    "      end\n"
    "  - name: client\n    kind: process.lua\n    source: |\n"
    "      return function(conns, trips)\n"
    "        local server = process.spawn('b:echo', nil, process.pid())\n"
    "        local addr = process.inbox():receive():data()\n"
    "        local msg = string.rep('x', 64)\n"
    "        local cs = {}\n"
    "        for i = 1, conns do\n"
    "          cs[i] = assert(net.connect(addr))\n"
    "          cs[i]:write(msg); cs[i]:read_exact(64)\n"
    "        end\n"
    "        local done = channel.new(conns)\n"
    "        local t0 = time.bench_now()\n"
    "        for i = 1, conns do\n"
    "          coroutine.spawn(function(c)\n"
    "            for _ = 1, trips do c:write(msg); assert(c:read_exact(64)) end\n"
    "            done:send(true)\n"
    "          end, cs[i])\n"
    "        end\n"
    "        for _ = 1, conns do done:receive() end\n"
    "        local dt = time.bench_now() - t0\n"
    "        for i = 1, conns do cs[i]:close() end\n"
    "        process.terminate(server)\n"
    "        return tostring(conns * trips / dt)\n"
    "      end\n";

/* ---- baseline: the same echo in C on one libuv loop ---- */

typedef struct peer {
    uv_tcp_t tcp; /* first */
    struct bench *b;
    bool client;
    char buf[65536];
    size_t have; /* client: bytes of the current reply so far */
    int trips;
} peer;

typedef struct bench {
    uv_loop_t loop;
    uv_tcp_t server;
    int conns, trips, connected, finished;
    peer *clients;
    double t0, t1;
} bench;

typedef struct wreq {
    uv_write_t req;
    char data[];
} wreq;

static void on_written(uv_write_t *r, int status)
{
    (void)status;
    free(r);
}

static void send_bytes(peer *p, const char *data, size_t len)
{
    wreq *w = malloc(sizeof *w + len);
    memcpy(w->data, data, len);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    uv_write(&w->req, (uv_stream_t *)&p->tcp, &b, 1, on_written);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    peer *p = (peer *)h;
    (void)suggested;
    *b = p->client ? uv_buf_init(p->buf + p->have, (unsigned)(sizeof p->buf - p->have))
                   : uv_buf_init(p->buf, sizeof p->buf);
}

static void start_timing(bench *b);

static void free_peer(uv_handle_t *h) { free(h); }

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    peer *p = (peer *)s;
    if (n <= 0) {
        if (n < 0) uv_close((uv_handle_t *)s, p->client ? NULL : free_peer);
        return;
    }
    if (!p->client) { /* echo */
        send_bytes(p, buf->base, (size_t)n);
        return;
    }
    p->have += (size_t)n;
    if (p->have < MSG) return;
    p->have = 0;
    bench *b = p->b;
    if (p->trips < 0) { /* the warm-up trip */
        p->trips = 0;
        if (++b->connected == b->conns) start_timing(b);
        return;
    }
    if (++p->trips < b->trips) {
        send_bytes(p, p->buf, MSG);
        return;
    }
    if (++b->finished == b->conns) {
        b->t1 = bench_now();
        for (int i = 0; i < b->conns; i++) uv_close((uv_handle_t *)&b->clients[i].tcp, NULL);
        uv_close((uv_handle_t *)&b->server, NULL);
    }
}

static void start_timing(bench *b)
{
    b->t0 = bench_now();
    for (int i = 0; i < b->conns; i++) send_bytes(&b->clients[i], b->clients[i].buf, MSG);
}

static void on_connection(uv_stream_t *server, int status)
{
    bench *b = server->data;
    if (status < 0) return;
    peer *p = calloc(1, sizeof *p);
    p->b = b;
    uv_tcp_init(&b->loop, &p->tcp);
    uv_accept(server, (uv_stream_t *)&p->tcp);
    uv_tcp_nodelay(&p->tcp, 1);
    uv_read_start((uv_stream_t *)&p->tcp, on_alloc, on_read);
}

static void on_connect(uv_connect_t *req, int status)
{
    peer *p = (peer *)req->handle;
    free(req);
    if (status < 0) {
        fprintf(stderr, "baseline connect: %s\n", uv_strerror(status));
        exit(1);
    }
    uv_tcp_nodelay(&p->tcp, 1);
    uv_read_start((uv_stream_t *)&p->tcp, on_alloc, on_read);
    memset(p->buf, 'x', MSG);
    send_bytes(p, p->buf, MSG);
}

static double baseline(int conns, int trips)
{
    bench b = {.conns = conns, .trips = trips};
    uv_loop_init(&b.loop);
    uv_tcp_init(&b.loop, &b.server);
    b.server.data = &b;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_bind(&b.server, (struct sockaddr *)&a, 0);
    uv_listen((uv_stream_t *)&b.server, 511, on_connection);
    struct sockaddr_storage ss;
    int len = sizeof ss;
    uv_tcp_getsockname(&b.server, (struct sockaddr *)&ss, &len);
    b.clients = calloc((size_t)conns, sizeof *b.clients);
    for (int i = 0; i < conns; i++) {
        peer *p = &b.clients[i];
        p->b = &b;
        p->client = true;
        p->trips = -1;
        uv_tcp_init(&b.loop, &p->tcp);
        uv_tcp_connect(malloc(sizeof(uv_connect_t)), &p->tcp, (struct sockaddr *)&ss, on_connect);
    }
    uv_run(&b.loop, UV_RUN_DEFAULT);
    uv_loop_close(&b.loop);
    free(b.clients);
    return (double)conns * trips / (b.t1 - b.t0);
}

/* ---- Steward ---- */

static double steward(sw_runtime *rt, int conns, int trips)
{
    lua_State *L = luaL_newstate();
    lua_pushinteger(L, conns);
    lua_pushinteger(L, trips);
    double v = bench_run(rt, "b:client", NULL, L, 2);
    lua_close(L);
    return v;
}

int main(int argc, char **argv)
{
    int one = argc > 1 ? atoi(argv[1]) : 20000;
    int each = argc > 2 ? atoi(argv[2]) : 500;
    signal(SIGPIPE, SIG_IGN);
    sw_registry *reg = bench_load(app);
    sw_log *log = sw_log_new(stderr, false, SW_LOG_WARN, false);
    /* One worker: both processes on one thread, as the baseline. Two: the server may be
     * stolen by the idle worker before it opens its listener (then it stays there). */
    sw_runtime *rts[2];
    for (int i = 0; i < 2; i++) {
        sw_runtime_config cfg = {.workers = i + 1};
        sw_api_use(&cfg);
        rts[i] = sw_runtime_new(reg, log, &cfg);
    }
    const struct {
        int conns, trips;
    } runs[] = {{1, one}, {100, each}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int c = runs[i].conns, t = runs[i].trips;
        double base[3], w1[3], w2[3];
        for (int k = 0; k < 3; k++) { /* alternating, so drift in machine speed hits all alike */
            base[k] = baseline(c, t);
            w1[k] = steward(rts[0], c, t);
            w2[k] = steward(rts[1], c, t);
        }
        double b = bench_median(base, 3), s1 = bench_median(w1, 3), s2 = bench_median(w2, 3);
        printf("tcp echo, %d connection%s x %d round trips of %d bytes (medians of 3):\n", c,
               c > 1 ? "s" : "", t, MSG);
        printf("  steward, 1 worker: %.0f round trips/s; 2 workers: %.0f/s\n", s1, s2);
        printf("  baseline: the same echo in C on one libuv loop: %.0f round trips/s; ratio (1 "
               "worker) %.2f\n",
               b, s1 / b);
    }
    for (int i = 0; i < 2; i++) sw_runtime_free(rts[i]);
    sw_log_free(log);
    sw_registry_free(reg);
    return 0;
}
