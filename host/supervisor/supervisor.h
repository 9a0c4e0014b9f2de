/* The supervisor (docs/supervision.md): services started in dependency order as soon as their
 * dependencies run, restarted by policy with growing backoff, grouped under service.group
 * strategies, stopped dependents-first, and reloaded from disk. It lives on one libuv loop
 * (the main thread); worker threads tell it about exits and readiness through a locked queue
 * and a park (worker_park.h: it spins briefly for a reply, else waits in the loop's poll behind
 * a flag that the one sender who finds it raised writes its eventfd for), so its state has one
 * owner. Each entry point (a batch of worker
 * messages, a timer, a request, a reload, a signal) ends with one reconcile, then one call to
 * the change subscriber if anything changed. */
#ifndef STEWARD_SUPERVISOR_H
#define STEWARD_SUPERVISOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "log.h"
#include "preparer.h"
#include "registry.h"
#include "restart_window.h"
#include "runtime.h"
#include "stop_wave.h"
#include "worker_park.h"

/* The public state of a service or group: what logs and `steward status` show. */
typedef enum {
    SW_SVC_INACTIVE,
    SW_SVC_STARTING,
    SW_SVC_RUNNING,
    SW_SVC_STOPPING,
    SW_SVC_STOPPED,
    SW_SVC_FAILED
} sw_svc_state;

/* Where a service's lifecycle is (service.c owns it): each combination that occurs is one
 * value; sw_svc_view maps it to the public state (in brackets). */
typedef enum {
    SW_SUB_INACTIVE, /* [inactive] never started, or wanted again after a stop for good */
    SW_SUB_BLOCKED, /* [inactive] with a reason: a dependency or earlier sibling will not run by itself */
    SW_SUB_INACTIVE_FOR_GOOD, /* [inactive] not started by itself (stopped by hand, removed, its group failed for good) */
    SW_SUB_AWAIT_STANDBY, /* [starting] launched when the standby being prepared comes */
    SW_SUB_STARTING,      /* [starting] its process runs, not ready yet */
    SW_SUB_START_TIMED_OUT, /* [starting] killed: not ready within start_timeout; its end is a failure */
    SW_SUB_STARTING_KILLED, /* [starting] killed by the shutdown timeout; its end is a stop */
    SW_SUB_RUNNING,         /* [running] */
    SW_SUB_RUNNING_KILLED,  /* [running] killed by the shutdown timeout; its end is a stop */
    SW_SUB_RUNNING_FAILED,  /* [running] killed by its watchdog or health checks; its end is a
                                 failure with `reason` (as START_TIMED_OUT while starting) */
    SW_SUB_STOPPING,        /* [stopping] CANCEL sent; its end is a stop */
    SW_SUB_STOPPING_KILLED, /* [stopping] killed after stop_timeout (or a timeout before) */
    SW_SUB_ENDING,          /* [stopping] its process ended, processes it spawned are left:
                                 CANCEL sent to them; the end is judged once they are gone */
    SW_SUB_ENDING_KILLED,   /* [stopping] those left were killed after stop_timeout */
    SW_SUB_BACKOFF_STOPPED, /* [stopped] its restart timer is armed */
    SW_SUB_BACKOFF_FAILED,  /* [failed] its restart timer is armed */
    SW_SUB_STOPPED, /* [stopped] down; starts again once startable (a hold released, a zero backoff) */
    SW_SUB_FAILED,           /* [failed] likewise */
    SW_SUB_STOPPED_FOR_GOOD, /* [stopped] not started by itself (stopped by hand, returned, gave up) */
    SW_SUB_FAILED_FOR_GOOD, /* [failed] not started by itself (not retryable, gave up, cannot launch) */
    SW_SUB_DISCARDED        /* [stopped] freed; its memory goes when its standby comes back */
} sw_svc_sub;

typedef struct sw_supervisor sw_supervisor;
typedef struct sw_grp sw_grp;

#define SW_SVC_ERRORS 5

/* One service. Allocated on its own so its address (the exit callback's argument) survives
 * a reload that rebuilds the service list. Thread: the loop's. */
typedef struct sw_svc {
    const sw_entry *entry;
    const sw_registry *reg; /* the snapshot entry belongs to (a reference) */
    sw_supervisor *sup;
    size_t index;   /* in the graph; (size_t)-1 once removed by a reload */
    sw_grp *group;  /* the enclosing service.group, or NULL (the root) */
    size_t pos;     /* position among the group's children */
    sw_svc_sub sub; /* its lifecycle; changed only by service*.c */
    /* Facts independent of sub, kept beside it (each would multiply the enum): */
    bool wanted;               /* should run: auto_start, needed by a wanted one, or by hand. The
                                    user's and the graph's intent, held in every sub-state */
    bool ends_for_good;        /* a run under way or pending (starting, running, stopping, in
                                    backoff) is not followed by another: a stop by hand, a removal,
                                    a temporary bystander's hold or its group's failure for good
                                    decide it at any point of the run; once down it becomes the
                                    sub-state's _FOR_GOOD. As sub-states it would double 11 of them */
    bool preparing;            /* a standby is being made on the preparer's thread: another
                                    thread's work, under way in any sub-state, even DISCARDED */
    sw_grp *held_by;           /* the coordinated restart (a group's strategy, a restart by hand
                                    or a reload) that stops it and starts it again only when it
                                    releases it. A relation, not a phase: a held service goes
                                    running, stopping, stopped while held, and whose hold it is
                                    decides when it ends */
    uint64_t pid;              /* the current run, 0 when none */
    struct sw_svc_count *tree; /* its process tree (proc_limits.h), from its first launch */
    struct {                   /* ENDING: how the run's own process ended, judged later */
        sw_svc_sub sub;        /* the sub-state it ended in */
        int kind;              /* sw_exit_kind */
        bool retryable;
        char *error;
    } end;
    int64_t attempt;    /* consecutive ends that led to a restart (backoff's n) */
    uint64_t run_start; /* uv_hrtime of the current run, 0 before the first */
    char *reason;
    /* what `steward status` shows */
    uint64_t restarts;       /* runs started after the first */
    int64_t next_attempt_at; /* wall clock (ns since the epoch) of the scheduled restart, or 0 */
    char *last_errors[SW_SVC_ERRORS]; /* the newest failure reasons, a ring; NULL-padded */
    unsigned n_errors; /* failures recorded so far (ring position = n_errors % SW_SVC_ERRORS) */
    uv_timer_t timer;  /* backoff, start timeout or stop timeout */
    size_t *dependents, n_dependents;
    size_t retired_level;       /* removed by a reload: its old start level (stops highest first) */
    struct sw_proc *standby;    /* in a crash loop: the next run, created ahead (preparer.h) */
    const sw_entry *standby_of; /* the entry it was made for */
    struct { /* service.set_restart_policy: judges the current run's end instead of the entry's
                   lifecycle.restart; dropped when the next run starts */
        bool set;
        sw_restart r;
    } run_policy;
    struct { /* the input list encoded as main's arguments, once per entry */
        unsigned char *data;
        size_t len;
        const sw_entry *of;
    } args;
    struct {                 /* liveness of the current run (sup_watchdog.c, sup_health.c) */
        uv_timer_t watchdog; /* armed at the watchdog's deadline while running */
        uint64_t since;      /* uv_hrtime the watchdog counts from: when the run became running */
        uv_timer_t check_timer; /* the next check, or the timeout of the one in flight */
        uint64_t check_pid;     /* the health check in flight, or 0 */
        uint64_t check_started; /* uv_hrtime the run's checks count from (start_period) */
        int64_t failures;       /* consecutive failed checks of this run */
        int health;             /* sw_health */
        char *last_error;       /* the last failed check's error, or NULL */
    } live;
    unsigned open_handles; /* timers still to close before it is freed */
    struct {               /* its stop_timeout, while armed: queued by stop_wave.c, not on timer */
        uint64_t due;      /* loop time (ms) */
        sup_stop_fired fired;
        sup_stop_queue *queue; /* NULL: not armed */
        sw_svc *next, *prev;
    } stop;
    bool touched;         /* in the supervisor's list of services to reconcile (sup_touch) */
    bool held_for_change; /* --watch: failed after a change, starts again at the next one */
} sw_svc;

/* A service's health as its checks found it in the current run (`steward status`). */
typedef enum {
    SW_HEALTH_NONE,     /* no lifecycle.health, or no run */
    SW_HEALTH_UNKNOWN,  /* no check has answered in this run yet */
    SW_HEALTH_HEALTHY,  /* the last check passed */
    SW_HEALTH_UNHEALTHY /* the last `live.failures` checks failed */
} sw_health;

/* A child of a group: a service or a group. */
typedef struct sw_child {
    sw_svc *svc;
    sw_grp *grp;
} sw_child;

/* A service.group: its children in list order, the services under it (flattened, list
 * order), its restart window and its own restart state as a child of its parent. */
struct sw_grp {
    const sw_entry *entry; /* NULL for the by-hand pseudo-group */
    sw_supervisor *sup;
    sw_grp *parent;
    size_t pos;
    sw_child *children;
    size_t n_children;
    sw_svc **members;
    size_t n_members;
    sw_svc_state state;
    bool wanted;          /* its members should run */
    bool busy, holds;     /* scratch of sup_group_releases */
    unsigned open_timers; /* handles still to close before it is freed */
    int64_t attempt;      /* the group's own consecutive failures (its backoff's n) */
    uint64_t run_start;   /* uv_hrtime when it last became running */
    bool final;           /* failed for good */
    bool waiting;         /* its own restart is scheduled (timer) */
    bool set_pending;     /* a strategy restart of some children waits out set_timer */
    sw_window window;     /* its restart window */
    uv_timer_t timer, set_timer;
};

typedef struct sw_sup_msg sw_sup_msg;
typedef struct sup_validation sup_validation;

struct sw_supervisor {
    uv_loop_t *loop;
    sw_runtime *rt;
    const sw_registry *reg; /* the current snapshot (a reference) */
    sw_log *log;
    sw_svc **svcs; /* graph order of reg */
    size_t n;
    sw_grp **grps;
    size_t n_grps;
    sw_grp by_hand;       /* holds the services of a restart by hand */
    sw_preparer preparer; /* started at the first crash loop */
    sw_svc **retired;     /* removed by a reload, still stopping */
    size_t n_retired;
    pthread_mutex_t lock; /* guards the message queue from workers */
    sw_sup_msg *head, *tail;
    atomic_bool posted; /* the queue is not empty: set and cleared under lock, read without */
    sw_park park;       /* how the loop's thread waits for messages, and how workers wake it */
    uv_prepare_t before_poll; /* spins or raises the park's flag */
    uv_check_t after_poll;    /* lowers it */
    uv_idle_t no_wait;        /* active for one pass: messages were taken, the poll must not wait */
    bool parked;              /* the flag is raised for this pass's poll */
    bool expecting;    /* the last batch looks like one turn of an exchange: its reply is near */
    uint64_t launches; /* runs launched so far (a batch that launched one expects its news) */
    bool small_batch;  /* handling and settling a batch of one or two messages (not bulk) */
    uv_timer_t shutdown_timer;
    int64_t shutdown_timeout_ns;
    bool shutting_down, done;
    /* The shutdown timeout passed: whatever is left is killed at once. */
    bool shutdown_expired;
    bool ready_sent; /* READY=1 told since the start or the last reload */
    bool changed;    /* a service or group changed in this entry point */
    bool telling;    /* the change subscriber is being called */
    void (*on_change)(void *arg);
    void *on_change_arg;
    /* Lifecycle news for the outside (sd_notify): "READY=1" once every auto-start service
     * runs, "STOPPING=1" when shutdown begins, "RELOADING=1" then "READY=1" around a reload.
     * Optional; called on the loop's thread. */
    void (*notify)(void *arg, const char *state);
    void *notify_arg;
    /* Reload with validation (sup_validate.c): the reload whose validators run, or NULL; the
     * count of reloads that ended (applied or rejected) and how the last one ended. */
    sup_validation *validating;
    uint64_t reloads;
    bool reload_ok;
    char *reload_errors; /* the last one's reasons, one a line (malloc'd), or NULL */
    /* `steward run --watch` (docs/supervision.md "Watch mode"): a failure that its policy would
     * restart holds the service until the next reload that applies instead */
    bool hold_failures;
    struct sup_shutdown *shutdown; /* the shutdown's stop order (sup_shutdown.c), or NULL */
    sup_stop_queue **stop_queues;  /* one per stop_timeout armed so far (stop_wave.c) */
    size_t n_stop_queues;
    sup_stop_queue *stop_last; /* the last one used */
    /* The reconcile looks at what changed (sup_apply.c): in a batch of worker messages
     * (`local`), the services with a transition and their dependents; a full scan at other
     * entry points, and when something changed that the list cannot say (`scan_all`). */
    bool local, scan_all;
    bool stop_sets;       /* the last look left a service to stop or release (continue_stops) */
    size_t ready_blocker; /* the service that held READY=1 back at the last look */
    sw_svc **touched;
    size_t n_touched, cap_touched;
};

/* Every function here runs on the loop's thread, and none calls back into its caller except
 * through the change subscriber and `notify`. */

/* Prepares the services of reg in caller storage s: no process runs yet. reg is retained
 * (released by close); loop, rt and log are borrowed and must outlive s. 0, or -1 when out of
 * memory or the wake-up cannot be made. */
int sw_supervisor_init(sw_supervisor *s, uv_loop_t *loop, sw_runtime *rt, const sw_registry *reg,
                       sw_log *log);
/* Starts the auto-start services and groups and what they depend on. Cannot fail: a service
 * that cannot be launched ends `failed` with the reason. */
void sw_supervisor_start(sw_supervisor *s);
/* Graceful shutdown: dependents first, CANCEL then kill after stop_timeout, all bounded by
 * the shutdown timeout. `done` becomes true (and the loop is stopped) when nothing runs.
 * A second call does nothing. */
void sw_supervisor_shutdown(sw_supervisor *s);
/* The operations the control socket exposes: start one service (and what it needs), stop
 * one (its dependents first; it stays stopped), restart one (then its dependents). They
 * return at once; the services get there over later entry points (see on_change). 0, or -1
 * if id names no service or when out of memory (then nothing changed). id is borrowed. */
int sw_supervisor_start_one(sw_supervisor *s, const char *id);
int sw_supervisor_stop_one(sw_supervisor *s, const char *id);
int sw_supervisor_restart_one(sw_supervisor *s, const char *id);
/* Reload (SIGHUP; SIGUSR2 with restart_all): loads the app directory again; on any error logs
 * every one and changes nothing (returns -1 and, if errors is not NULL, a malloc'd text of
 * them for the caller to free); else applies the difference (docs/supervision.md) and
 * returns 0. Services removed keep their memory until they are down. When changed services
 * have a lifecycle.validate, returns 1 at once: their validators run as processes and the
 * reload is applied or rejected later, in another entry point, which counts `reloads` and
 * sets `reload_ok` and `reload_errors`. A reload while one is validated is refused (-1). */
int sw_supervisor_reload(sw_supervisor *s, bool restart_all, char **errors);
/* The `service` module's door (sw_svc_request_fn, runtime.h; arg: the supervisor): queues rq
 * for the loop, which applies it to the named service's current run. Thread: any. */
int sw_supervisor_service_request(void *arg, const sw_svc_request *rq);
/* The service of an id, or NULL; for status queries. Borrowed: valid until the next entry
 * point (a reload may free a removed service once it is down). */
sw_svc *sw_supervisor_find(sw_supervisor *s, const char *id);
/* Marks in set (s->n flags) the services of the service.group id, at any depth. The number
 * marked; 0 when id names no group. Thread: the loop's. */
size_t sw_supervisor_group_members(sw_supervisor *s, const char *id, bool *set);
/* Subscribes fn (one subscriber; NULL unsubscribes): called once at the end of each entry
 * point in which any service or group changed, after its reconcile. fn may call back into the
 * supervisor (start_one, ...): the changes that makes are told by a further call, not nested. */
void sw_supervisor_on_change(sw_supervisor *s, void (*fn)(void *arg), void *arg);
/* Frees everything s holds and closes its loop handles, running the loop until they are
 * closed; call after the loop has stopped (after shutdown, or without a start). */
void sw_supervisor_close(sw_supervisor *s);

/* Seconds since the current run's last service.alive() (or since it became running, when it
 * has not pinged yet); -1 when it has no watchdog or is not running. */
double sw_svc_alive_age(const sw_svc *v, uint64_t now_hr);

/* Reading a service (none fails; v is borrowed). */
const char *sw_svc_state_name(sw_svc_state st);
/* The public state of a sub-state, and of a service. */
sw_svc_state sw_svc_view(sw_svc_sub sub);
sw_svc_state sw_svc_state_of(const sw_svc *v);
/* Whether a service has a process (or is about to, or is still stopping one). */
bool sw_svc_active(const sw_svc *v);
/* Whether its restart timer is armed (a retry is scheduled). */
bool sw_svc_waiting(const sw_svc *v);
/* Whether it is not started again by itself (its run, if any, is the last). */
bool sw_svc_for_good(const sw_svc *v);
/* Whether it will not change by itself soon: running, failed (even with a retry scheduled),
 * ended for good, blocked by a dependency, or not wanted and down; never while held. */
bool sw_svc_settled(const sw_svc *v);

#endif
