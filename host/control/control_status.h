/* The status document of the control socket: the supervisor's services as JSON, read on the
 * loop's thread (the supervisor's fields have that one owner). */
#ifndef STEWARD_CONTROL_STATUS_H
#define STEWARD_CONTROL_STATUS_H

#include <stdint.h>

#include "jsonbuf.h"
#include "supervisor.h"

/* {"ok":true,"host":{"pid":…,"uptime":…,"services":N},"services":[{service}…]}
 * host_start: uv_hrtime when the host started. */
void sw_ctl_status_all(sw_jbuf *b, sw_supervisor *s, uint64_t host_start);
/* {"ok":true,"service":{service + "depends_on", "dependents", "errors" (newest first)}} */
void sw_ctl_status_one(sw_jbuf *b, sw_supervisor *s, const sw_svc *v);
/* One service object: id, state, pid, uptime, restarts, attempt, next_retry (ISO-8601 UTC),
 * next_retry_in (s), reason, group; null where there is nothing to say. */
void sw_ctl_service_json(sw_jbuf *b, const sw_svc *v, int64_t now_wall_ns, uint64_t now_hr);

/* Wall clock, ns since the epoch. */
int64_t sw_ctl_wall_ns(void);

#endif
