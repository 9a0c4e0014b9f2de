/* What the supervisor's files (supervisor.c: a service's lifecycle; sup_group.c: groups;
 * sup_reload.c: reload) share. Everything here runs on the supervisor's loop thread. */
#ifndef STEWARD_SUP_INTERNAL_H
#define STEWARD_SUP_INTERNAL_H

#include "supervisor.h"

/* Arms a one-shot timer ns from now (never early: refreshes libuv's cached clock). */
void sup_arm(uv_timer_t *t, uv_timer_cb cb, int64_t ns);
int64_t sup_wall_ns(void);
/* Logs one "service state" event for an id (a service or a group). */
void sup_log_state(sw_supervisor *s, const char *id, sw_svc_state st, int64_t attempt, const char *reason, int64_t next_ns);
void sup_transition(sw_svc *v, sw_svc_state st, const char *reason, int64_t next_ns);

/* Schedules v's own restart after its backoff delay (the root's way, and one_for_one's). */
void sup_schedule_restart(sw_svc *v, const char *reason, sw_svc_state st);
/* Starts whatever can start; marks services blocked for good. */
void sup_reconcile(sw_supervisor *s);
/* After an end or a timer: stops that were waiting on it go on, holds whose set is down are
 * released. */
void sup_continue_stops(sw_supervisor *s);
/* Frees a prepared next run, if any. */
void sup_drop_standby(sw_svc *v);
/* CANCEL now (kill after stop_timeout), or cancel a scheduled restart. */
void sup_begin_stop(sw_svc *v);
/* Stops every service in set whose dependents and later siblings in set are down; true while
 * any of them is still active. */
bool sup_stop_wave(sw_supervisor *s, const bool *set);
/* Wants service i and, transitively, what it needs (its whole top-level group included). */
void sup_want(sw_supervisor *s, size_t i);

/* ---- reload (sup_reload.c) ---- */
/* Frees the services a reload removed once their process has ended. */
void sup_reap_retired(sw_supervisor *s);
/* A service for graph index i of the current snapshot; frees one (after its timer closes). */
sw_svc *sup_svc_new(sw_supervisor *s, size_t i);
void sup_svc_free(sw_svc *v);
void sup_build_dependents(sw_supervisor *s);

/* ---- groups (sup_group.c) ---- */
int sup_groups_build(sw_supervisor *s);
void sup_groups_close(sw_supervisor *s);
void sup_groups_free(sw_supervisor *s);
/* A member of the previous sibling (of v or of an enclosing group) that does not run yet:
 * list order says v waits for it. NULL when none. */
const sw_svc *sup_sibling_pending(const sw_svc *v);
/* Whether a service after v in list order (in v's group or an enclosing one) and in set is
 * still active: list order says v stops after it. */
bool sup_later_sibling_active(const sw_svc *v, const bool *set);
/* A restart-worthy end of grouped service v (its own policy says restart): the group's window
 * and strategy decide; may fail the group and escalate. */
void sup_group_child_ended(sw_svc *v, const char *reason, sw_svc_state st);
/* Releases the holds whose whole set is down and whose delay has passed. */
void sup_release_holds(sw_supervisor *s);
/* Logs groups whose members all run (or ended for good) as running. */
void sup_groups_settle(sw_supervisor *s);
/* Shutdown: no group restarts any more. */
void sup_groups_cancel(sw_supervisor *s);
/* Wants every member of g's top-level group. */
void sup_want_group(sw_supervisor *s, sw_grp *g);

#endif
