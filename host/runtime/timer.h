/* Process timers (time.sleep, time.after, tickers). A timer lives on the libuv loop of the
 * worker running the process when it is armed; each firing becomes a TIMER delivery whose ref
 * is the timer's id, so the process may have moved to another worker meanwhile. What a firing
 * wakes (a task, a channel) is registered in the process's timers table by whoever armed it.
 * A process that ends leaves its timers to fire into nothing and free themselves. */
#ifndef STEWARD_TIMER_H
#define STEWARD_TIMER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sw_proc sw_proc;
typedef struct sw_timer sw_timer;

/* Monotonic seconds (what time.now() returns). Thread: any. */
double sw_time_now(void);

/* Arms a timer for p, which runs on the calling worker thread: it fires after ns (never
 * early), then every ns if repeat. NULL when the caller is not a worker thread or out of
 * memory. Thread: the worker running p. */
sw_timer *sw_timer_start(sw_proc *p, int64_t ns, bool repeat);
/* The id its TIMER deliveries carry (unique within the process). */
uint64_t sw_timer_id(const sw_timer *t);
/* Stops a repeating timer: it delivers nothing more and closes at its next firing. The
 * pointer must not be used afterwards. Thread: any. */
void sw_timer_stop(sw_timer *t);

#endif
