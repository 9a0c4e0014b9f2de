/* What service.c, service_launch.c and service_end.c share about one service's lifecycle
 * (service.h): the sub-state predicates they all read, the logged transition (svc_enter) and
 * the silent shift, stop_timeout, and the timers they arm. Included only by those files. */
#ifndef STEWARD_SERVICE_INTERNAL_H
#define STEWARD_SERVICE_INTERNAL_H

#include "service.h"
#include "sup_internal.h"
#include "units.h"

/* ---- sub-states ---- */

/* Its end is a stop (CANCEL sent, or killed by the shutdown timeout), not a failure. */
static inline bool stop_requested(sw_svc_sub sub)
{
    return sub == SW_SUB_STOPPING || sub == SW_SUB_STOPPING_KILLED ||
           sub == SW_SUB_STARTING_KILLED || sub == SW_SUB_RUNNING_KILLED;
}

/* Killed by the supervisor for a reason of its own (v->reason): its end is that failure. */
static inline bool failed_by_host(sw_svc_sub sub)
{
    return sub == SW_SUB_START_TIMED_OUT || sub == SW_SUB_RUNNING_FAILED;
}

static inline bool killed(sw_svc_sub sub)
{
    return failed_by_host(sub) || sub == SW_SUB_STARTING_KILLED || sub == SW_SUB_RUNNING_KILLED ||
           sub == SW_SUB_STOPPING_KILLED;
}

/* ---- transitions (service.c) ---- */

/* A down sub-state as it is for a service whose run ended for good. */
sw_svc_sub svc_for_good_of(sw_svc_sub sub);
/* The one logged transition: v enters sub with reason (see service.c). */
void svc_enter(sw_svc *v, sw_svc_sub sub, const char *reason, int64_t next_ns);

/* A change within the same public state: not logged. */
static inline void shift(sw_svc *v, sw_svc_sub sub)
{
    v->sub = sub;
    v->sup->changed = true;
    sup_touch(v);
}

/* ---- timers (service.c; each an entry point: it ends with the supervisor's settle) ---- */

void svc_start_timeout_fired(uv_timer_t *t);
/* An ending run's stop_timeout: what is left of its tree is killed (stop_wave.c settles). */
void svc_tree_timeout_fired(sw_svc *v);
void svc_backoff_fired(uv_timer_t *t);

/* stop_timeout (docs/supervision.md "Stopping and shutdown"): 0 kills at once without CANCEL
 * (OTP's brutal_kill); infinity waits as long as it takes (the shutdown timeout still bounds a
 * shutdown); past the shutdown timeout nothing waits any more. */
static inline int64_t stop_timeout(const sw_svc *v)
{
    return v->entry->as.service.lifecycle.stop_timeout_ns;
}

static inline bool kill_at_once(const sw_svc *v)
{
    return stop_timeout(v) == 0 || v->sup->shutdown_expired;
}

static inline void arm_stop_timeout(sw_svc *v, sup_stop_fired fired)
{
    if (stop_timeout(v) != SW_DURATION_INFINITE) sup_stop_arm(v, stop_timeout(v), fired);
}

/* Stops v's timer, and its stop_timeout (which has none of its own: stop_wave.h). */
static inline void svc_timer_stop(sw_svc *v)
{
    uv_timer_stop(&v->timer);
    sup_stop_disarm(v);
}

#endif
