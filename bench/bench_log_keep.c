/* What keeping log records costs (docs/operating.md, Logs): a tight loop of sw_log_write (a
 * typical service record) into /dev/null, plain (the baseline: what `run -x` does) against
 * kept in the per-service rings (what `run DIR` does by default) and in the rings plus
 * per-service files (log.dir, in a temp directory); text and JSON; 1 and 4 writing threads,
 * each its own service. Prints the median over rounds of ns per record until the calls return
 * ("call") and until sw_log_free has written everything ("all"), and the ratio of "call" to
 * the baseline of the same format and threads. Timing is printed, never asserted. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "log.h"
#include "log_ring.h"

#define ROUNDS  7
#define RECORDS 200000 /* per round, split among the threads */

typedef enum { KEEP_NONE, KEEP_RINGS, KEEP_FILES } keep_mode;
static const char *const keep_names[] = {"plain", "rings", "rings+files"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct job {
    sw_log *log;
    int n;
    char service[16];
} job;

static void *writer(void *arg)
{
    job *j = arg;
    for (int i = 0; i < j->n; i++) {
        sw_log_field f[] = {{.key = "path", .type = SW_LF_STR, .s = "/api/v1/items?page=3"},
                            {.key = "status", .type = SW_LF_INT, .i = 200},
                            {.key = "ms", .type = SW_LF_NUM, .d = 1.25},
                            {.key = "seq", .type = SW_LF_INT, .i = i}};
        sw_log_write(j->log, SW_LOG_INFO, j->service, "request served", f, 4);
    }
    return NULL;
}

static void round_once(keep_mode k, bool json, int threads, const char *dir, double *call,
                       double *all)
{
    FILE *out = fopen("/dev/null", "w");
    if (!out) exit(1);
    sw_log *log = sw_log_new(out, json, SW_LOG_INFO, false);
    sw_log_keep keep = {.ring_lines = k == KEEP_NONE ? 0 : SW_LOG_RING_LINES,
                        .ring_bytes = SW_LOG_RING_BYTES,
                        .dir = k == KEEP_FILES ? dir : NULL};
    char err[256];
    if (sw_log_start_keeping(log, &keep, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    pthread_t t[8];
    job j[8];
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        j[i] = (job){.log = log, .n = RECORDS / threads};
        snprintf(j[i].service, sizeof j[i].service, "app:s%d", i);
        pthread_create(&t[i], NULL, writer, &j[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double t1 = now();
    sw_log_free(log);
    double t2 = now();
    fclose(out);
    *call = (t1 - t0) * 1e9 / RECORDS;
    *all = (t2 - t0) * 1e9 / RECORDS;
}

int main(void)
{
    char dir[] = "/tmp/bench_log_keep.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    printf("%-12s %-5s %7s %10s %10s %8s\n", "kept", "fmt", "threads", "call ns", "all ns",
           "x plain");
    for (int json = 0; json <= 1; json++)
        for (int threads = 1; threads <= 4; threads *= 4) {
            double base = 0;
            for (int k = KEEP_NONE; k <= KEEP_FILES; k++) {
                double call[ROUNDS], all[ROUNDS];
                for (int r = 0; r < ROUNDS; r++)
                    round_once((keep_mode)k, json, threads, dir, &call[r], &all[r]);
                double c = bench_median(call, ROUNDS), a = bench_median(all, ROUNDS);
                if (k == KEEP_NONE) base = c;
                printf("%-12s %-5s %7d %10.0f %10.0f %8.2f\n", keep_names[k],
                       json ? "json" : "text", threads, c, a, c / base);
            }
        }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
