/* Log record cost: a tight loop of sw_log_write (a typical service record, ~110 bytes of text)
 * through the public API only (so the same file measures older versions of the log), into
 * /dev/null, a pipe drained by a reader thread, and a regular file; text and JSON; 1 and 4
 * writing threads. Prints the median over rounds of ns per record as the writers see it
 * ("call": until the last sw_log_write returns) and until sw_log_free has written everything
 * ("all"), and for the pipe how many lines the reader got. Timing is printed, never asserted. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define ROUNDS  7
#define RECORDS 200000 /* per round, split among the threads */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct job {
    sw_log *log;
    int n;
} job;

static void *writer(void *arg)
{
    job *j = arg;
    for (int i = 0; i < j->n; i++) {
        sw_log_field f[] = {{.key = "path", .type = SW_LF_STR, .s = "/api/v1/items?page=3"},
                            {.key = "status", .type = SW_LF_INT, .i = 200},
                            {.key = "ms", .type = SW_LF_NUM, .d = 1.25},
                            {.key = "seq", .type = SW_LF_INT, .i = i}};
        sw_log_write(j->log, SW_LOG_INFO, "app:api", "request served", f, 4);
    }
    return NULL;
}

typedef struct reader {
    int fd;
    long lines;
} reader;

static void *drain(void *arg)
{
    reader *r = arg;
    static char buf[1 << 16];
    ssize_t n;
    while ((n = read(r->fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) r->lines += buf[i] == '\n';
    return NULL;
}

typedef enum { SINK_NULL, SINK_PIPE, SINK_FILE } sink;
static const char *const sink_names[] = {"/dev/null", "pipe", "file"};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One round: ns per record until the calls return (*call) and until all is written (*all). */
static void round_once(sink s, bool json, int threads, double *call, double *all, long *got)
{
    FILE *out;
    reader rd = {.fd = -1, .lines = 0};
    pthread_t rt;
    if (s == SINK_NULL) {
        out = fopen("/dev/null", "w");
    } else if (s == SINK_FILE) {
        out = tmpfile();
    } else {
        int p[2];
        if (pipe(p) != 0) exit(1);
        rd.fd = p[0];
        pthread_create(&rt, NULL, drain, &rd);
        out = fdopen(p[1], "w");
    }
    if (!out) exit(1);
    sw_log *log = sw_log_new(out, json, SW_LOG_INFO, false);
    pthread_t t[8];
    job j = {.log = log, .n = RECORDS / threads};
    double t0 = now();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, writer, &j);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double t1 = now();
    sw_log_free(log);
    double t2 = now();
    fclose(out);
    *got = -1;
    if (s == SINK_PIPE) {
        pthread_join(rt, NULL);
        close(rd.fd);
        *got = rd.lines;
    }
    *call = (t1 - t0) * 1e9 / RECORDS;
    *all = (t2 - t0) * 1e9 / RECORDS;
}

int main(void)
{
    printf("%-10s %-5s %7s %10s %10s %14s\n", "sink", "fmt", "threads", "call ns", "all ns",
           "pipe lines");
    for (int s = SINK_NULL; s <= SINK_FILE; s++)
        for (int json = 0; json <= 1; json++)
            for (int threads = 1; threads <= 4; threads *= 4) {
                double call[ROUNDS], all[ROUNDS];
                long got = -1, least = RECORDS;
                for (int r = 0; r < ROUNDS; r++) {
                    round_once((sink)s, json, threads, &call[r], &all[r], &got);
                    if (got >= 0 && got < least) least = got;
                }
                qsort(call, ROUNDS, sizeof call[0], cmp);
                qsort(all, ROUNDS, sizeof all[0], cmp);
                char lines[32] = "-";
                if (s == SINK_PIPE) snprintf(lines, sizeof lines, "%ld/%d", least, RECORDS);
                printf("%-10s %-5s %7d %10.0f %10.0f %14s\n", sink_names[s], json ? "json" : "text",
                       threads, call[ROUNDS / 2], all[ROUNDS / 2], lines);
            }
    return 0;
}
