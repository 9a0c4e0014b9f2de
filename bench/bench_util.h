/* Shared by the benchmarks: the median of a sample and an app registry loaded from YAML text.
 * Header-only: each benchmark is one translation unit. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

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

/* A registry of one file holding yaml; prints the errors and exits if it does not load. */
static inline sw_registry *bench_load(const char *yaml)
{
    sw_registry_file f = {"/nonexistent-bench/app.yaml", yaml, strlen(yaml)};
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *r = sw_registry_load_files("/nonexistent-bench", &f, 1, &d);
    if (!r) {
        sw_diags_finish(&d);
        sw_diags_print(&d, stderr);
        exit(1);
    }
    sw_diags_free(&d);
    return r;
}

#endif
