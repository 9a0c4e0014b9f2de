/* The restart window's ring. */
#include "restart_window.h"

#include <stdlib.h>

/* Doubles the ring (up to max), keeping its order from the oldest. */
static void grow(sw_window *w, size_t max)
{
    size_t cap = w->cap ? w->cap * 2 : 16;
    if (cap > max) cap = max;
    int64_t *t = malloc(cap * sizeof *t);
    if (!t) abort();
    for (size_t i = 0; i < w->n; i++) t[i] = w->times[(w->head + i) % w->cap];
    free(w->times);
    w->times = t;
    w->cap = cap;
    w->head = 0;
}

bool sw_window_add(sw_window *w, int64_t intensity, int64_t period_ns, int64_t now)
{
    if (intensity <= 0) return true;
    bool oldest_inside = w->n > 0 && now - w->times[w->head] < period_ns;
    if (w->n == w->cap && w->cap < (uint64_t)intensity && (w->n == 0 || oldest_inside))
        grow(w, (size_t)intensity);
    if (w->n < w->cap) {
        w->times[(w->head + w->n++) % w->cap] = now;
        return false;
    }
    if (oldest_inside) return true; /* intensity restarts already inside the period: one more */
    w->times[w->head] = now;
    w->head = (w->head + 1) % w->cap;
    return false;
}

void sw_window_reset(sw_window *w) { w->n = w->head = 0; }

void sw_window_free(sw_window *w)
{
    free(w->times);
    *w = (sw_window){0};
}
