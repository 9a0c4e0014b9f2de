/* A process: one vm (LuaJIT state), its mailbox, its tasks, and its place in the world (pid,
 * monitors, links, names). Anything from another thread reaches it only as a delivery to
 * its mailbox; everything else is touched only by the worker running it. Reference-counted:
 * the pid table, run queues and anyone who grabbed it hold references. */
#ifndef STEWARD_PROC_H
#define STEWARD_PROC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "proc_limits.h"
#include "mailbox.h"
#include "message.h"
#include "entry.h"
#include "proc_ctx.h"
#include "security_identity.h"
#include "vm.h"
#include "worker.h"

typedef struct sw_runtime sw_runtime;
typedef struct sw_task sw_task;
typedef struct sw_net_owned sw_net_owned;
typedef struct sw_http_owned sw_http_owned;
typedef struct sw_fs_owned sw_fs_owned;
typedef struct sw_exec_owned sw_exec_owned;

typedef enum { SW_EXIT_OK, SW_EXIT_FAILED, SW_EXIT_KILLED } sw_exit_kind;

/* How a process ended: given to its exit callback, its monitors and links. */
typedef struct sw_exit_info {
    sw_exit_kind kind;
    const char *error; /* FAILED/KILLED: the message, with a traceback when there is one */
    bool retryable;    /* false only for errors.new{retryable = false} */
    int code;          /* exit code for `run -x`: 0 for success; a returned number 1..255;
                          else 1 for a failure */
    const unsigned char *result; /* encoded table {value = ..., error = ...} for EXIT events */
    size_t result_len;
} sw_exit_info;

/* Called on the worker thread as the process ends (after monitors and links are told). */
typedef void (*sw_exit_fn)(void *arg, uint64_t pid, const sw_exit_info *info);
/* Called when a process with a service calls process.ready(). */
typedef void (*sw_ready_fn)(void *arg, uint64_t pid);

typedef struct sw_spawn {
    const sw_entry *entry;       /* a process.lua */
    const sw_registry *registry; /* the snapshot entry belongs to; NULL: the runtime's current */
    const char *service;         /* service id for logs and ready(), or NULL */
    const unsigned char *args;   /* encoded arguments (sw_msg_encode), or NULL */
    size_t args_len;
    int argc; /* or plain string arguments (CLI), when args is NULL */
    char **argv;
    uint64_t monitor_by;  /* spawn_monitored: this pid gets an EXIT event */
    uint64_t monitor_ref; /* with this monitor reference */
    uint64_t link_to;     /* spawn_linked: linked to this pid from the start */
    sw_exit_fn on_exit;
    sw_ready_fn on_ready;
    void *cb_arg;
    sw_worker *worker; /* NULL: the caller's worker, else round-robin */
    sw_workers *pool;  /* NULL: the runtime's default host */
    sw_proc *parent;   /* the spawning process (process.spawn*), counted against its
                                    service's limit; NULL: the host (a service's own process) */
    const char *tree;  /* no service: the id its process tree is counted under (run -x) */
    /* The host's own code around the entry's (the HTTP server, docs/lua-api.md "HTTP server"):
     * called in the process's state, protected, with the function the entry chose at the top;
     * replaces it by the function to run as main (the arguments follow as usual). It reads
     * main_hook_arg with sw_proc_of(L)->main_hook_arg. NULL: the entry's function. */
    lua_CFunction main_hook;
    void *main_hook_arg;
    /* What the process runs as (docs/security.md "Identities at run time"), retained by it;
     * NULL: its service's context. What it spawns inherits it. */
    sw_sec_identity *identity;
} sw_spawn;

typedef struct pidvec {
    uint64_t *v;
    size_t n, cap;
} pidvec;

struct sw_proc {
    atomic_int refs;
    uint64_t id;
    char pid[32];
    sw_runtime *rt;
    sw_worker *worker; /* home worker: where it is queued when it wakes */
    sw_proc *next_run; /* run queue link, owned by the worker queue */

    pthread_mutex_t lock; /* guards the mailbox, `waiting`, `dead` and `vm` for killers */
    sw_mailbox mailbox;
    bool waiting; /* nothing to do until a delivery arrives */
    bool dead;
    sw_vm *vm;
    /* Handles it owns on its worker's loop (sockets, net.c; HTTP transfers, http_client.c): while nonzero no other worker
     * steals it (worker.c), so they are only ever touched on that loop's thread. */
    atomic_uint pins;

    /* Guarded by the pid table's lock (pidtable.c). */
    size_t names_owned;   /* names it registered that are not released */
    uint64_t names_swept; /* the table's death count at its last sweep for stale names */

    /* Set at prepare, read-only after. */
    sw_svc_count *svc; /* its service's process count and usage, or NULL (no service) */
    bool counted;      /* in the runtime's count of processes */
    bool svc_counted;  /* in svc's (a process a process spawned) */

    /* Below: only the thread running the process. */
    sw_proc_ctx ctx;
    const sw_entry *entry;
    sw_task *tasks; /* all live tasks */
    sw_task *ready_head, *ready_tail;
    sw_task *main, *current;
    sw_delivery *pending;       /* taken from the mailbox, not yet handled */
    sw_mailbox_out mailbox_out; /* what it took from its inbox, settled at each slice's end */
    bool kill_requested;
    sw_msgbuf sendbuf;   /* process.send encodes here; kept between sends */
    sw_proc *send_to;    /* the last destination of process.send, with a reference: */
    uint64_t send_to_id; /* the next send to it skips the pid table */
    unsigned char *args; /* encoded arguments for main, or NULL */
    size_t args_len;
    int argc; /* or CLI strings */
    char **argv;
    uint64_t next_task_id, next_ref;
    int phase; /* loading the chunk, then running main */
    pidvec watchers, watcher_refs, links, monitoring, monitoring_refs;
    bool trap_links;
    char *doom; /* set when a linked process failed: the reason this one dies */
    int inbox_ref, events_ref, timers_ref;
    sw_exit_fn on_exit;
    sw_ready_fn on_ready;
    void *cb_arg;
    char *service;
    sw_net_owned *net;               /* its sockets (net.c), closed as it ends; NULL: none yet */
    sw_http_owned *http;             /* its HTTP transfers (http_client.c), removed as it ends */
    struct sw_std_line *std_line[2]; /* its unfinished io lines (std_streams.c); NULL: none */
    sw_fs_owned *fs;                 /* its fs requests and open files (fs.c), closed as it ends */
    sw_exec_owned *exec;             /* its commands (exec.c), killed as it ends */
    lua_CFunction main_hook;         /* sw_spawn's */
    void *main_hook_arg;
    /* What it runs as: a reference, or NULL (see sw_spawn). */
    sw_sec_identity *identity;
};

/* Creates a process and queues it to run. Returns its pid (never 0), or 0 with a message in
 * err: among others "process limit reached" (the host's or the service's) and "host memory
 * limit reached" (docs/security.md "Limits"), checked before anything is made. Thread: any. */
uint64_t sw_proc_spawn(sw_runtime *rt, const sw_spawn *s, char *err, size_t errlen);
/* sw_proc_spawn in two steps, so the costly one can be done ahead of time: prepare creates the
 * state and loads the chunk (NULL with err on failure); nobody can reach the process until
 * launch gives it a pid and queues it (monitor_by, link_to, worker and pool are read then).
 * A prepared process that is never launched is freed with sw_proc_discard_prepared. */
sw_proc *sw_proc_prepare(sw_runtime *rt, const sw_spawn *s, char *err, size_t errlen);
uint64_t sw_proc_launch(sw_proc *p, const sw_spawn *s);
void sw_proc_discard_prepared(sw_proc *p);

void sw_proc_retain(sw_proc *p);
void sw_proc_release(sw_proc *p);

/* Runs one slice of p: its deliveries, then its ready tasks until one is preempted or none is
 * ready. Thread: the worker that popped it from a run queue. */
void sw_proc_run(sw_proc *p);
/* The pool's watchdog found vm running a slice at a check, ns after its previous check: that
 * much CPU time goes to its process's service (docs/supervision.md "Resources"). Thread:
 * the watchdog, holding the worker's slice lock (vm cannot be freed meanwhile). */
void sw_proc_charge(sw_vm *vm, uint64_t ns);

/* Frees a process that will never run again (the runtime is shutting down and its workers
 * have stopped): no monitor, link or exit callback hears of it. */
void sw_proc_discard(sw_proc *p);

/* The process owning L. */
sw_proc *sw_proc_of(lua_State *L);

/* Per-process references to Lua values anchored in the vm's registry. */
void sw_proc_push_inbox(sw_proc *p, lua_State *L);
void sw_proc_push_events(sw_proc *p, lua_State *L);
uint64_t sw_proc_new_ref(sw_proc *p);

void pidvec_push(pidvec *v, uint64_t x);
bool pidvec_remove(pidvec *v, uint64_t x);
/* Removes the first i with a[i] == x and b[i] == y from both. */
bool pidvec_remove_pair(pidvec *a, pidvec *b, uint64_t x, uint64_t y);
void pidvec_free(pidvec *v);

#endif
