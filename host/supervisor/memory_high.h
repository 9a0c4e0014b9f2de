/* The host's memory watermark, `memory.high` of the host config (docs/operating.md): once the
 * memory the host counts (every process's heap and queued deliveries: the runtime's budget)
 * passes it, one error names the three largest services and the host shuts down as on
 * SIGTERM. Checked on the supervisor's loop every SW_MEMORY_HIGH_CHECK_MS: one atomic read. */
#ifndef STEWARD_MEMORY_HIGH_H
#define STEWARD_MEMORY_HIGH_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "supervisor.h"

#define SW_MEMORY_HIGH_CHECK_MS 100

/* Caller storage. Thread: the supervisor's loop. */
typedef struct sw_memory_high {
    uv_timer_t timer;
    sw_supervisor *sup;
    uint64_t high; /* bytes; 0: not watched */
    bool fired;    /* it passed high: the shutdown it began is under way */
} sw_memory_high;

/* Watches s's runtime against high bytes (0: does nothing). The timer keeps no loop alive. */
void sw_memory_high_start(sw_memory_high *m, sw_supervisor *s, uint64_t high);
/* Closes the timer (the loop finishes closing it, e.g. in sw_supervisor_close). */
void sw_memory_high_stop(sw_memory_high *m);

#endif
