/* The Prometheus text exposition (format 0.0.4) of the host's figures (docs/operating.md
 * "Metrics"): per service its state, restarts, uptime, processes, memory, queued messages and
 * CPU time, and the host's processes, memory against its cap, services by state, uptime and
 * lost log lines; the same figures `steward status --json` shows (control_status.h). Read on
 * the supervisor's loop thread, which owns the services. */
#ifndef STEWARD_METRICS_TEXT_H
#define STEWARD_METRICS_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "supervisor.h"

/* The document, malloc'd, its length in *len; NULL when memory runs out. host_start:
 * uv_hrtime when the host started. */
char *sw_metrics_render(sw_supervisor *s, uint64_t host_start, size_t *len);

#endif
