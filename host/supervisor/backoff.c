/* Exponential backoff with jitter; grows with n (never reset by a retry, only by a stable run). */
#include "backoff.h"

#include <math.h>
#include <stdlib.h>

#include "random.h"

int64_t sw_backoff_delay(const sw_restart *r, int64_t n, double unit)
{
    if (n < 1) n = 1;
    if (r->initial_delay_ns <= 0)
        return 0; /* an explicit 0 stays 0: 0 * inf would be NaN, then max */
    double delay = (double)r->initial_delay_ns * pow(r->backoff_factor, (double)(n - 1));
    double max = (double)r->max_delay_ns;
    if (!(delay <= max)) delay = max; /* also catches overflow to inf */
    delay *= 1.0 + r->jitter * (2.0 * unit - 1.0);
    return delay < 0 ? 0 : (int64_t)llround(delay);
}

int64_t sw_backoff_next(const sw_restart *r, int64_t attempt)
{
    return sw_backoff_delay(
        r, attempt + 1,
        sw_random_unit()); /* seeded from the OS: a fleet never retries in lockstep */
}
