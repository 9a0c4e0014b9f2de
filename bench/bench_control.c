/* Control socket benchmark: `steward status --json` against a running host of 1,000 services
 * (a generated app: 100 chains of 10), timed as an operator sees it (the client process's
 * whole run) and as the request's round trip alone. Target: 50 ms. Baseline: the same client
 * binary doing nothing (`steward --version`), i.e. the cost of starting a process. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control_client.h"

#define SERVICES 1000
#define CHAIN    10
#define RUNS     30

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void write_app(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/app.yaml", dir);
    FILE *f = fopen(path, "w");
    fprintf(
        f,
        "namespace: app\nentries:\n  - name: p\n    kind: process.lua\n    source: |\n"
        "      return function()\n        local ev = process.events()\n"
        "        repeat local e = ev:receive() until e.kind == process.event.CANCEL\n      end\n");
    for (int i = 0; i < SERVICES; i++) {
        fprintf(f,
                "  - name: s%d\n    kind: process.service\n    process: p\n    lifecycle: { "
                "auto_start: true",
                i);
        if (i % CHAIN) fprintf(f, ", depends_on: [ s%d ]", i - 1);
        fprintf(f, " }\n");
    }
    fclose(f);
}

/* Runs argv with stdout and stderr to /dev/null; returns the pid (wait = false) or waits. */
static pid_t run(char *const argv[], bool wait)
{
    fflush(stdout); /* or the child would print our buffer again */
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execv(argv[0], argv);
        _exit(127);
    }
    if (wait) waitpid(pid, NULL, 0);
    return pid;
}

static char *status(const char *sock)
{
    char err[256];
    int fd = sw_ctl_connect(sock, err, sizeof err);
    if (fd < 0) return NULL;
    char *r = sw_ctl_call(fd, "{\"cmd\":\"status\"}", 10, err, sizeof err);
    close(fd);
    return r;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static void report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%-44s median %6.2f ms  p90 %6.2f ms  max %6.2f ms\n", what, t[n / 2] * 1e3,
           t[n * 9 / 10] * 1e3, t[n - 1] * 1e3);
}

int main(int argc, char **argv)
{
    (void)argc;
    char steward[512], dir[] = "/tmp/steward-bench-control-XXXXXX", sock[600];
    const char *slash = strrchr(argv[0], '/');
    snprintf(steward, sizeof steward, "%.*s/steward", slash ? (int)(slash - argv[0]) : 1,
             slash ? argv[0] : ".");
    if (!mkdtemp(dir)) return 1;
    write_app(dir);
    snprintf(sock, sizeof sock, "%s/.steward.sock", dir);
    char *host_argv[] = {steward, "run", dir, NULL};
    pid_t host = run(host_argv, false);
    double t0 = now();
    char *doc = NULL;
    while (now() - t0 < 60) { /* until every service runs */
        free(doc);
        doc = status(sock);
        if (doc && count(doc, "\"state\":\"running\"") == SERVICES) break;
        usleep(20000);
    }
    if (!doc || count(doc, "\"state\":\"running\"") != SERVICES) {
        fprintf(stderr, "bench_control: the host did not bring up %d services\n", SERVICES);
        kill(host, SIGKILL);
        return 1;
    }
    printf("status document: %zu bytes for %d services\n", strlen(doc), SERVICES);
    free(doc);
    double client[RUNS], table[RUNS], trip[RUNS], base[RUNS];
    char *status_argv[] = {steward, "status", "--json", "--control", sock, NULL};
    char *table_argv[] = {steward, "status", "--control", sock, NULL};
    char *version_argv[] = {steward, "--version", NULL};
    for (int i = 0; i < RUNS; i++) {
        double a = now();
        run(status_argv, true);
        client[i] = now() - a;
        a = now();
        run(table_argv, true);
        table[i] = now() - a;
        a = now();
        free(status(sock));
        trip[i] = now() - a;
        a = now();
        run(version_argv, true);
        base[i] = now() - a;
    }
    report("steward status --json (whole client run)", client, RUNS);
    report("steward status (table: parsed and laid out)", table, RUNS);
    report("request round trip (connect, ask, read)", trip, RUNS);
    report("baseline: steward --version", base, RUNS);
    printf("target: status --json <= 50 ms -> %s (median %.1fx the target)\n",
           client[RUNS / 2] <= 0.050 ? "met" : "MISSED", client[RUNS / 2] / 0.050);
    kill(host, SIGTERM);
    waitpid(host, NULL, 0);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    return system(rm) == 0 ? 0 : 1;
}
