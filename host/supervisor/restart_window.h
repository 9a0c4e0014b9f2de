/* A group's restart window (docs/supervision.md: more than `intensity` restarts within `period` fail
 * the group). A ring of the last `intensity` restart times: a restart costs O(1) (amortized
 * while the ring grows, which it does only as restarts actually come), never a scan of past
 * restarts, so the cost stays flat however many there were (OTP scans a list). */
#ifndef STEWARD_RESTART_WINDOW_H
#define STEWARD_RESTART_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_window {
    int64_t *times; /* ring, oldest at head */
    size_t n, head, cap;
} sw_window;

/* Records a restart at now (ns, monotonic); true if it is one more than intensity within
 * period (it is then not recorded). intensity 0: every restart is one too many. */
bool sw_window_add(sw_window *w, int64_t intensity, int64_t period_ns, int64_t now);
void sw_window_reset(sw_window *w);
void sw_window_free(sw_window *w);

#endif
