/* What each sub-state of a service shows: the six public states of logs and `steward status`
 * (docs/supervision.md), one table. */
#include "service.h"

static const sw_svc_state views[] = {
    [SW_SUB_INACTIVE] = SW_SVC_INACTIVE,
    [SW_SUB_BLOCKED] = SW_SVC_INACTIVE,
    [SW_SUB_INACTIVE_FOR_GOOD] = SW_SVC_INACTIVE,
    [SW_SUB_AWAIT_STANDBY] = SW_SVC_STARTING,
    [SW_SUB_STARTING] = SW_SVC_STARTING,
    [SW_SUB_START_TIMED_OUT] = SW_SVC_STARTING,
    [SW_SUB_STARTING_KILLED] = SW_SVC_STARTING,
    [SW_SUB_RUNNING] = SW_SVC_RUNNING,
    [SW_SUB_RUNNING_KILLED] = SW_SVC_RUNNING,
    [SW_SUB_RUNNING_FAILED] = SW_SVC_RUNNING,
    [SW_SUB_STOPPING] = SW_SVC_STOPPING,
    [SW_SUB_STOPPING_KILLED] = SW_SVC_STOPPING,
    [SW_SUB_ENDING] = SW_SVC_STOPPING,
    [SW_SUB_ENDING_KILLED] = SW_SVC_STOPPING,
    [SW_SUB_BACKOFF_STOPPED] = SW_SVC_STOPPED,
    [SW_SUB_BACKOFF_FAILED] = SW_SVC_FAILED,
    [SW_SUB_STOPPED] = SW_SVC_STOPPED,
    [SW_SUB_FAILED] = SW_SVC_FAILED,
    [SW_SUB_STOPPED_FOR_GOOD] = SW_SVC_STOPPED,
    [SW_SUB_FAILED_FOR_GOOD] = SW_SVC_FAILED,
    [SW_SUB_DISCARDED] = SW_SVC_STOPPED,
};

static const char *const state_names[] = {"inactive", "starting", "running",
                                          "stopping", "stopped",  "failed"};

const char *sw_svc_state_name(sw_svc_state st) { return state_names[st]; }
sw_svc_state sw_svc_view(sw_svc_sub sub) { return views[sub]; }
sw_svc_state sw_svc_state_of(const sw_svc *v) { return views[v->sub]; }
