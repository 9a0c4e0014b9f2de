/* Shared by the benchmarks: the monotonic clock, the median of a sample and an app registry
 * loaded from YAML text.
 * Header-only: each benchmark is one translation unit. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry.h"

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* A registry of n files holding yamls[0..n) (a000.yaml, a001.yaml, ... in that order: a big app
 * is split, as a document is bounded to 1,000,000 nodes); prints the errors and exits if it
 * does not load. */
static inline sw_registry *bench_load_files(char *const *yamls, size_t n)
{
    sw_registry_file *f = calloc(n, sizeof *f);
    char(*paths)[64] = calloc(n, sizeof *paths);
    if (!f || !paths) abort();
    for (size_t i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "/nonexistent-bench/a%03zu.yaml", i);
        f[i] = (sw_registry_file){paths[i], yamls[i], strlen(yamls[i])};
    }
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *r = sw_registry_load_files("/nonexistent-bench", f, n, &d);
    if (!r) {
        sw_diags_finish(&d);
        sw_diags_print(&d, stderr);
        exit(1);
    }
    sw_diags_free(&d);
    free(f);
    free(paths);
    return r;
}

/* A registry of one file holding yaml. */
static inline sw_registry *bench_load(const char *yaml)
{
    char *one = (char *)yaml;
    return bench_load_files(&one, 1);
}

#endif
