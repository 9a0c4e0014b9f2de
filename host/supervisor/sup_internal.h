/* What the supervisor's files share. The deciders (sup_group.c: groups; sup_reload.c: reload)
 * read the services and return a plan; the actor (sup_apply.c) applies plans, starts what can
 * start and stops in waves; supervisor.c holds the entry points, each ending in sup_settle.
 * One service's lifecycle is service.h's. Everything here runs on the supervisor's loop
 * thread unless it says otherwise. */
#ifndef STEWARD_SUP_INTERNAL_H
#define STEWARD_SUP_INTERNAL_H

#include "supervisor.h"

/* ---- plans ---- */

/* One step of a plan; applied in order, so log events come in the order they were decided. */
typedef enum {
    SUP_HOLD,        /* svc is held by grp; for_good: not started again (a temporary bystander,
                            or its group failed for good) */
    SUP_RELEASE,     /* svc's hold ends */
    SUP_FRESH,       /* svc gets a fresh start (no longer for good, attempt 0) */
    SUP_WANT,        /* svc (or every member of grp's top-level group) is wanted, with its needs */
    SUP_END_HELD,    /* svc ended (st, reason) inside a restart that holds it */
    SUP_OWN_RESTART, /* svc restarts by itself after delay (its backoff) */
    SUP_SET_RESTART, /* svc ended (st, reason): its group restarts it with others after delay */
    SUP_GRP_STATE,   /* grp enters st (reason) */
    SUP_GRP_RESTART, /* grp's own restart after delay; -1 cancels it */
    SUP_GRP_SET_RESTART /* grp starts the children it holds again after delay; -1 cancels it */
} sup_step_kind;

typedef struct sup_step {
    sup_step_kind kind;
    sw_svc *svc;
    sw_grp *grp;
    sw_svc_state st;
    bool for_good;
    int64_t delay;   /* ns */
    int64_t attempt; /* SUP_GRP_STATE: logged with it, as when decided (the decider
                                    may count the group's next attempt right after) */
    char *reason;    /* the plan's own copy, or NULL */
} sup_step;

typedef struct sup_plan {
    sup_step *v;
    size_t n, cap;
} sup_plan;

/* Appends a step (reason copied). Aborts when out of memory. */
void sup_plan_add(sup_plan *p, sup_step step);

/* ---- the actor (sup_apply.c) ---- */

/* Applies p's steps in order, then frees them (p is left empty). */
void sup_apply(sw_supervisor *s, sup_plan *p);
/* The end of every entry point: stop waves go on, holds whose set is down are released,
 * whatever can start starts (the one reconcile), the change subscriber is told. */
void sup_settle(sw_supervisor *s);
/* Arms a one-shot timer ns from now (never early: refreshes libuv's cached clock). */
void sup_arm(uv_timer_t *t, uv_timer_cb cb, int64_t ns);
/* v's state changed (service.c's transitions): the reconcile of a batch of worker messages
 * looks at v and its dependents. A change it cannot follow so (a plan applied, a grouped
 * service, memory) sets s->scan_all instead. */
void sup_touch(sw_svc *v);
/* Logs one "service state" event for an id, a service's or a group's; marks a change
 * (service.c). */
void sup_log_state(sw_supervisor *s, const char *id, sw_svc_state st, int64_t attempt,
                   const char *reason, int64_t next_ns);

/* ---- the shutdown's stop order (sup_shutdown.c) ---- */

/* One wave of the shutdown: stops every service whose dependents (transitively through
 * services already down) and later siblings are down; true while any service is still
 * active. Kept as counts updated from the transitions since the last wave: a whole shutdown
 * costs O(services + dependencies). */
bool sup_shutdown_wave(sw_supervisor *s);
/* v had a logged transition (service.c's svc_enter): the next wave looks at it. Nothing
 * before the shutdown's first wave. */
void sup_shutdown_touched(sw_svc *v);
/* Frees the counts (sw_supervisor_close). */
void sup_shutdown_free(sw_supervisor *s);

/* ---- the workers' side (supervisor.c) ---- */

/* The callbacks service_launch.c and service_end.c give the runtime and the preparer (any
 * thread): each queues a message and wakes the loop; out of memory, the message is lost (a
 * standby is discarded). */
void sup_on_exit(void *arg, uint64_t pid, const sw_exit_info *info);
void sup_on_ready(void *arg, uint64_t pid);
void sup_on_prepared(void *tag, sw_proc *p);
void sup_on_tree_gone(void *arg);
/* A reload's validator ended (arg: the supervisor). */
void sup_on_validator_exit(void *arg, uint64_t pid, const sw_exit_info *info);
/* A health check ended (arg: the supervisor). */
void sup_on_health_exit(void *arg, uint64_t pid, const sw_exit_info *info);

/* ---- health checks (sup_health.c) ---- */

/* Health check pid ended (MSG_HEALTH): kind and error by the return convention. */
void sup_health_ended(sw_supervisor *s, uint64_t pid, sw_exit_kind kind, const char *error);

/* ---- groups (sup_group.c) ---- */

/* The tree of s's current snapshot (aborts when out of memory); dropping it (each group is
 * freed once its timers have closed). */
void sup_groups_build(sw_supervisor *s);
void sup_groups_drop(sw_supervisor *s);
/* g enters st (reason), logged with attempt: its one logged transition. */
void sup_grp_enter(sw_grp *g, sw_svc_state st, const char *reason, int64_t attempt);
/* A member of the previous sibling (of v or of an enclosing group) that does not run yet:
 * list order says v waits for it. NULL when none. */
const sw_svc *sup_sibling_pending(const sw_svc *v);
/* Whether a service after v in list order (in v's group or an enclosing one) and in set is
 * still active: list order says v stops after it. */
bool sup_later_sibling_active(const sw_svc *v, const bool *set);
/* Plans: a restart-worthy end (st, reason) of grouped service v that no restart holds yet
 * (its group's window and strategy decide; may fail the group and escalate); wanting g's
 * top-level group; releasing the holds whose set is down and whose delay has passed; the
 * groups that now run (or, in shutdown, are down). */
void sup_group_child_ended(sw_svc *v, sw_svc_state st, const char *reason, sup_plan *p);
void sup_group_want(sw_grp *g, sup_plan *p);
void sup_group_releases(sw_supervisor *s, sup_plan *p);
void sup_group_settle(sw_supervisor *s, sup_plan *p);

/* ---- reload (sup_reload.c) ---- */

/* What a reload found: the new snapshot and policies, each new service's old self (or NULL),
 * which changed, which old ones are gone. */
typedef struct sup_reload {
    sw_registry *reg;
    sw_security_set *policies;
    sw_svc **old_of; /* per new graph index */
    bool *changed;   /* per new graph index */
    sw_svc **removed;
    size_t *removed_level;
    size_t n_removed, added, n_changed;
} sup_reload;

/* Loads and checks the app directory again and matches it to s's services by id. On any
 * error logs each one and returns -1 (errors: a malloc'd text, if not NULL); r then holds
 * nothing. Else 0: r holds reg and policies, for the caller to keep, and arrays for
 * sup_reload_free. Aborts when out of memory. */
int sup_reload_plan(sw_supervisor *s, bool restart_all, sup_reload *r, char **errors);
void sup_reload_free(sup_reload *r);
/* Once the new services are in place: the changed ones and their dependents restart (held by
 * hand, fresh if they had failed for good); auto-start services and groups new to s start. */
void sup_reload_steps(sw_supervisor *s, const bool *changed, sup_plan *p);

/* Applies a reload that passed its checks: the new snapshot in place, what changed restarts,
 * what is new starts; r is freed. supervisor.c. */
void sup_reload_apply(sw_supervisor *s, sup_reload *r, bool restart_all);
/* Records a reload that changed nothing (errors: its reasons, one a line; copied). */
void sup_reload_rejected(sw_supervisor *s, const char *errors);

/* ---- reload validation (sup_validate.c) ---- */

/* Starts the validators of the changed services of r that have a lifecycle.validate, as
 * processes of the new snapshot. false: there are none, r is untouched and the caller applies
 * it. true: r is taken (the caller's is emptied) and applied, or rejected and freed, once every
 * validator has answered or timed out (start_timeout), in a later entry point. */
bool sup_validate_begin(sw_supervisor *s, sup_reload *r, bool restart_all);
/* Validator pid ended (MSG_VALIDATED): kind and error by the return convention. */
void sup_validate_ended(sw_supervisor *s, uint64_t pid, sw_exit_kind kind, const char *error);
/* Rejects the reload under validation, if any, with reason: its validators are killed. */
void sup_validate_cancel(sw_supervisor *s, const char *reason);

/* Handles the messages worker threads queued (exits, readiness, standbys). supervisor.c. */
size_t sup_drain(sw_supervisor *s);

#endif
