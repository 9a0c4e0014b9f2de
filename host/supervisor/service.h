/* One service's lifecycle (service.c, service_launch.c, service_end.c): its sub-state
 * (supervisor.h) and every transition, launching a run or awaiting its standby, readiness, the
 * end of a run as its own policy judges it, stopping and killing, and its timer. It never
 * looks at other services: what depends on what, groups and waves are the supervisor's.
 * Wing-internal; every function runs on the supervisor's loop thread and cannot fail unless
 * it says so. */
#ifndef STEWARD_SERVICE_H
#define STEWARD_SERVICE_H

#include "supervisor.h"

/* A service for graph index i of s's current snapshot (the snapshot is retained). Aborts when
 * out of memory. */
sw_svc *svc_new(sw_supervisor *s, size_t i);
/* DISCARDED: its memory goes once its timer has closed and any standby in preparation is back. */
void svc_free(sw_svc *v);

/* ---- transitions ---- */

/* BLOCKED (logged): a dependency or earlier sibling will not run by itself; reason names it. */
void svc_block(sw_svc *v, const char *reason);
/* Not started again by itself: a down service enters the _FOR_GOOD of its sub-state at once
 * (unlogged: its public state stays), a run under way ends for good. */
void svc_mark_for_good(sw_svc *v);
/* A fresh start by hand or by a reload: no longer for good, attempt 0. */
void svc_fresh(sw_svc *v);

/* Down, not in backoff and not for good: starts once wanted, free and its dependencies run. */
bool svc_idle(const sw_svc *v);
/* A dependency that will not run by itself: down for good, or blocked itself. */
bool svc_blocked_for_good(const sw_svc *v);
/* Started enough for the next sibling: running, or returned for good after running. */
bool svc_started(const sw_svc *v);

/* ---- runs ---- */

/* STARTING: launches a run with its standby or a new process (or awaits the standby being
 * prepared). A launch that fails ends FAILED_FOR_GOOD. */
void svc_start(sw_svc *v);
/* Makes the processes of the next runs of vs[0..n) now (up to 64), as their standbys (not for
 * one that has one, or one being prepared), on this thread and the preparer's together: a
 * reconcile that starts many services makes their processes first, then launches them in a
 * burst, so a worker takes the burst in one wake-up instead of being woken for each. Not
 * logged; a failure is left to svc_start. */
void svc_prepare_ahead(sw_svc *const *vs, size_t n);
/* READY=1 from run pid (ignored unless it is the current run and it is starting). */
void svc_ready(sw_svc *v, uint64_t pid);

/* The end of a run as its own policy judges it. */
typedef struct svc_end {
    bool to_group;   /* restart-worthy in a group that does not hold it: the group decides */
    sw_svc_state st; /* then: stopped or failed */
    char reason[1024];
} svc_end;
/* Run pid ended (an end of an earlier run is ignored: false). true when something changed;
 * out->to_group says the group's plan must follow. */
bool svc_ended(sw_svc *v, uint64_t pid, sw_exit_kind kind, bool retryable, const char *error,
               svc_end *out);
/* The tree of v's ended run is gone (sup_on_tree_gone): the run's end is judged now, as by
 * svc_ended. false for a stale call. */
bool svc_tree_gone(sw_svc *v, svc_end *out);
/* A prepared process (or NULL) for entry `of` is back from the preparer: launched if v awaits
 * it, kept as the standby if still of use, else discarded; frees a DISCARDED v. */
void svc_standby_arrived(sw_svc *v, sw_proc *p, const sw_entry *of);
/* Frees a prepared next run, if any. */
void svc_drop_standby(sw_svc *v);

/* ---- resources (service_usage.c; docs/supervision.md "Resources") ---- */

/* Logs what the run that just ended used: one "run ended" event. */
void svc_log_usage(const sw_svc *v);
/* Whether a process of its current (or just ended) run went past lifecycle.limits.memory. */
bool svc_over_memory(const sw_svc *v);

/* Its own restart after delay ns: logged (st, reason, delay) with the attempt that ended, then
 * counted; BACKOFF with its timer unless delay is 0 (then down, started by the reconcile). */
void svc_schedule_restart(sw_svc *v, sw_svc_state st, const char *reason, int64_t delay);
/* A restart that its group times (one_for_all, rest_for_one): the attempt is counted, then
 * logged (st, reason, delay); down and held, with no timer of its own. */
void svc_set_restart(sw_svc *v, sw_svc_state st, const char *reason, int64_t delay);
/* Down with (st, reason), logged, for a restart under way (held): no timer, not for good. */
void svc_end_held(sw_svc *v, sw_svc_state st, const char *reason);

/* The restart policy that judges the end of v's current run: the run's own
 * (service.set_restart_policy), else its entry's. */
const sw_restart *svc_restart(const sw_svc *v);
/* A request of the `service` module about v's current run (ignored when no run is under way:
 * it came after the run's end, which is told after everything its processes sent). */
void svc_request(sw_svc *v, const sw_svc_request *rq);

/* Fails the current run with reason (the watchdog, health checks): its process is killed and
 * its end is judged as a failure with that reason, by its policy. Nothing unless it is starting
 * or running. */
void svc_fail_run(sw_svc *v, const char *reason);

/* ---- liveness (sup_watchdog.c, sup_health.c) ---- */

/* Their timers, made with v and closed with it (each counted in v->open_handles). */
void svc_liveness_init(sw_svc *v);
void svc_liveness_close(sw_svc *v, uv_close_cb closed);
/* The run became running: its watchdog, if any, counts from now. */
void svc_watchdog_arm(sw_svc *v);
/* A run was launched: its health checks, if any, begin. */
void svc_health_begin(sw_svc *v);
/* The run ended or is being stopped: its watchdog and checks stop (a check in flight is
 * killed; its result, when it comes, is about nobody). */
void svc_liveness_stop(sw_svc *v);

/* Stops v now: CANCEL (killed after stop_timeout) if it runs; a pending start or a scheduled
 * restart is cancelled. Nothing if it is down or already stopping. */
void svc_begin_stop(sw_svc *v);
/* The shutdown timeout: kills its process, if any; its end is a stop. */
void svc_kill(sw_svc *v);

#endif
