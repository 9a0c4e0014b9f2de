/* HTTP client benchmark beside a baseline measured in the same run: GET requests against a
 * keep-alive responder in plain C (its own thread and libuv loop, a fixed 2-byte answer),
 * one at a time and 50 at once. Steward: one process whose tasks call http.get (1 worker);
 * baseline: the same requests through libcurl's own multi loop in plain C (curl_multi_perform
 * and curl_multi_poll, easy handles re-added as they finish), on one thread.
 *   bench_http_client [REQUESTS_ONE [REQUESTS_FIFTY]]   (defaults 5000 and 20000) */
#include <curl/curl.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "bench_util.h"
#include "api.h"
#include "bench_process.h"
#include "runtime.h"

static const char app[] =
    "namespace: b\n"
    "entries:\n"
    "  - name: client\n    kind: process.lua\n    source: |\n"
    "      return function(url, conns, n)\n"
    "        assert(http.get(url)) -- connect once before timing\n"
    "        local done = channel.new(conns)\n"
    "        local t0 = time.now()\n"
    "        for i = 1, conns do\n"
    "          coroutine.spawn(function()\n"
    "            for _ = 1, n / conns do assert(http.get(url).status == 200) end\n"
    "            done:send(true)\n"
    "          end)\n"
    "        end\n"
    "        for _ = 1, conns do done:receive() end\n"
    "        return tostring(n / (time.now() - t0))\n"
    "      end\n";

static const char answer[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";

static double now(void) { return (double)uv_hrtime() / 1e9; }

/* ---- the responder: answers each request head (ends with "\r\n\r\n") on its connection ---- */

typedef struct conn {
    uv_tcp_t h;
    unsigned match; /* how much of "\r\n\r\n" the bytes so far end with */
    char buf[16384];
} conn;

static uv_loop_t rloop;
static uv_tcp_t rlisten;
static uv_async_t rstop;
static int rport;

static void on_alloc(uv_handle_t *h, size_t s, uv_buf_t *b)
{
    (void)s;
    *b = uv_buf_init(((conn *)h)->buf, sizeof((conn *)h)->buf);
}

static void on_written(uv_write_t *r, int status)
{
    (void)status;
    free(r);
}

static void free_conn(uv_handle_t *h) { free(h); }

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    conn *c = (conn *)s;
    if (n < 0) {
        uv_close((uv_handle_t *)s, free_conn);
        return;
    }
    int heads = 0;
    for (ssize_t i = 0; i < n; i++) {
        char ch = b->base[i];
        c->match = (ch == "\r\n\r\n"[c->match]) ? c->match + 1 : (ch == '\r');
        if (c->match == 4) {
            heads++;
            c->match = 0;
        }
    }
    for (int i = 0; i < heads; i++) {
        uv_write_t *w = malloc(sizeof *w);
        uv_buf_t out = uv_buf_init((char *)answer, sizeof answer - 1);
        uv_write(w, s, &out, 1, on_written);
    }
}

static void on_connection(uv_stream_t *l, int status)
{
    if (status < 0) return;
    conn *c = calloc(1, sizeof *c);
    uv_tcp_init(&rloop, &c->h);
    if (uv_accept(l, (uv_stream_t *)&c->h) == 0) {
        uv_tcp_nodelay(&c->h, 1);
        uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
    } else {
        uv_close((uv_handle_t *)&c->h, free_conn);
    }
}

static void close_all(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, h->type == UV_TCP && h != (uv_handle_t *)&rlisten ? free_conn : NULL);
}

static void on_stop(uv_async_t *a) { uv_walk(a->loop, close_all, NULL); }

static void responder_main(void *arg)
{
    (void)arg;
    uv_run(&rloop, UV_RUN_DEFAULT);
}

static uv_thread_t responder_start(void)
{
    uv_loop_init(&rloop);
    uv_tcp_init(&rloop, &rlisten);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_bind(&rlisten, (struct sockaddr *)&a, 0);
    uv_listen((uv_stream_t *)&rlisten, 511, on_connection);
    struct sockaddr_in got;
    int len = sizeof got;
    uv_tcp_getsockname(&rlisten, (struct sockaddr *)&got, &len);
    rport = ntohs(got.sin_port);
    uv_async_init(&rloop, &rstop, on_stop);
    uv_thread_t t;
    uv_thread_create(&t, responder_main, NULL);
    return t;
}

/* ---- baseline: libcurl's multi loop ---- */

static size_t discard(char *d, size_t s, size_t n, void *u)
{
    (void)d;
    (void)u;
    return s * n;
}

static double baseline(const char *url, int conns, int n)
{
    CURLM *m = curl_multi_init();
    CURL **e = calloc((size_t)conns, sizeof *e);
    for (int i = 0; i < conns; i++) {
        e[i] = curl_easy_init();
        curl_easy_setopt(e[i], CURLOPT_URL, url);
        curl_easy_setopt(e[i], CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e[i], CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e[i], CURLOPT_PROXY, "");
        curl_multi_add_handle(m, e[i]);
    }
    int started = conns, finished = 0, running = 1;
    double t0 = now();
    while (finished < n) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            if (msg->data.result != CURLE_OK) {
                fprintf(stderr, "baseline: %s\n", curl_easy_strerror(msg->data.result));
                exit(1);
            }
            finished++;
            curl_multi_remove_handle(m, h);
            if (started < n) {
                started++;
                curl_multi_add_handle(m, h);
            }
        }
        if (finished < n) curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    double dt = now() - t0;
    for (int i = 0; i < conns; i++) {
        curl_multi_remove_handle(m, e[i]);
        curl_easy_cleanup(e[i]);
    }
    free(e);
    curl_multi_cleanup(m);
    return n / dt;
}

/* ---- Steward ---- */

static double steward(sw_runtime *rt, const char *url, int conns, int n)
{
    lua_State *L = luaL_newstate();
    lua_pushstring(L, url);
    lua_pushinteger(L, conns);
    lua_pushinteger(L, n);
    double v = bench_run(rt, "b:client", NULL, L, 3);
    lua_close(L);
    return v;
}

int main(int argc, char **argv)
{
    int one = argc > 1 ? atoi(argv[1]) : 5000;
    int fifty = argc > 2 ? atoi(argv[2]) : 20000;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    uv_thread_t rt_thread = responder_start();
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", rport);
    sw_registry *reg = bench_load(app);
    sw_log *log = sw_log_new(stderr, false, SW_LOG_WARN, false);
    sw_runtime_config cfg = {.workers = 1};
    sw_api_use(&cfg);
    sw_runtime *rt = sw_runtime_new(reg, log, &cfg);
    const struct {
        int conns, n;
    } runs[] = {{1, one}, {50, fifty}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int c = runs[i].conns, n = runs[i].n;
        double base[3], st[3];
        for (int k = 0; k < 3; k++) { /* alternating, so drift in machine speed hits both alike */
            base[k] = baseline(url, c, n);
            st[k] = steward(rt, url, c, n);
        }
        double b = bench_median(base, 3), s = bench_median(st, 3);
        printf("http GET, %d request%s at a time, %d requests, keep-alive responder in C (medians "
               "of 3):\n",
               c, c > 1 ? "s" : "", n);
        printf("  steward, 1 worker, http.get from %d task%s: %.0f requests/s\n", c,
               c > 1 ? "s" : "", s);
        printf("  baseline: libcurl's multi loop in plain C: %.0f requests/s; ratio %.2f\n", b,
               s / b);
    }
    sw_runtime_free(rt);
    sw_log_free(log);
    sw_registry_free(reg);
    uv_async_send(&rstop);
    uv_thread_join(&rt_thread);
    uv_loop_close(&rloop);
    return 0;
}
