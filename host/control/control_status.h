/* The status document of the control socket (docs/operating.md): the supervisor's services
 * as JSON values (json.h), read on the loop's thread (the supervisor's fields have that one
 * owner). Each function returns a new reference, or NULL when memory runs out. */
#ifndef STEWARD_CONTROL_STATUS_H
#define STEWARD_CONTROL_STATUS_H

#include <stdint.h>

#include "json.h"
#include "supervisor.h"

/* {"ok":true,"host":{"pid":…,"uptime":…,"shutting_down":…,"services":N},"services":[{service}…]}
 * host_start: uv_hrtime when the host started. */
json_t *sw_ctl_status_all(sw_supervisor *s, uint64_t host_start);
/* {"ok":true,"service":{service + "depends_on", "dependents", "errors" (newest first)}} */
json_t *sw_ctl_status_one(sw_supervisor *s, const sw_svc *v);
/* One service object: id, state, pid, uptime, processes, memory, memory_peak, memory_max
 * (bytes), cpu (s), queued, restarts, attempt, next_retry (ISO-8601 UTC), next_retry_in (s),
 * reason, group; null where there is nothing to say. */
json_t *sw_ctl_service_json(const sw_svc *v, int64_t now_wall_ns, uint64_t now_hr);

/* Seconds its current run has been up at now_hr (uv_hrtime), or -1 when none is. */
double sw_ctl_service_uptime(const sw_svc *v, uint64_t now_hr);
/* Its processes: its run's own and those it spawned, at any depth. */
long long sw_ctl_service_processes(const sw_svc *v);

/* Wall clock, ns since the epoch. */
int64_t sw_ctl_wall_ns(void);

#endif
