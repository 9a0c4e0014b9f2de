/* Keeping the audit log readable under a storm (docs/security.md "Audit"): the host's log
 * summarizes repeated warnings and errors, but audit events are info records, which it never
 * holds back, so a process denied in a loop would flood it. This limiter lets through at most
 * SW_AUDIT_BURST events alike (same kind, actor, action, resource) per SW_AUDIT_WINDOW_NS, and
 * at most SW_AUDIT_MAX_PER_S events of any kind a second; what it holds back is counted and
 * told in the `suppressed` field of the next event it lets through. Pure bookkeeping, one
 * lock; no Lua, no logging. */
#ifndef STEWARD_SECURITY_AUDIT_H
#define STEWARD_SECURITY_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#define SW_AUDIT_BURST     10
#define SW_AUDIT_WINDOW_NS ((int64_t)10000000000) /* 10 s */
#define SW_AUDIT_MAX_PER_S 200

typedef struct sw_audit sw_audit;

sw_audit *sw_audit_new(void); /* NULL when memory runs out */
void sw_audit_free(sw_audit *a);

/* Whether to write this event at now_ns (CLOCK_MONOTONIC). When true, *suppressed is how many
 * events were held back since the last one written (to be told with this one). Thread: any. */
bool sw_audit_admit(sw_audit *a, int64_t now_ns, const char *kind, const char *actor,
                    const char *action, const char *resource, uint64_t *suppressed);

#endif
