/* Restart delays (docs/supervision.md): the restart after the n-th consecutive failure waits
 * min(initial * factor^(n-1), max), randomized by +/- jitter. Pure functions: the supervisor
 * passes its own random source, tests pass a fixed one. */
#ifndef STEWARD_BACKOFF_H
#define STEWARD_BACKOFF_H

#include <stdint.h>

#include "entry.h"

/* Delay in nanoseconds before attempt n+1 after n consecutive failures (n >= 1). `unit` is a
 * uniform random number in [0, 1): 0.5 gives the centre (no jitter). */
int64_t sw_backoff_delay(const sw_restart *r, int64_t n, double unit);
/* The delay after `attempt` earlier consecutive failures and this one, jittered by the host's
 * generator, seeded from the OS (base/random.h). */
int64_t sw_backoff_next(const sw_restart *r, int64_t attempt);

#endif
