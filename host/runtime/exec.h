/* Commands of processes (the `exec` module, docs/lua-api.md "exec"): a child started with
 * uv_spawn on the loop of the worker running the process, in a process group of its own
 * (UV_PROCESS_DETACHED: setsid), with pipes for its stdin, stdout and stderr. A process owning
 * a command is pinned to that worker (sw_proc.pins), so its Lua code and the command's libuv
 * callbacks run on one thread. Whatever happens (output, exit, a drained write, the timeout)
 * becomes an EXEC delivery to the process (ref = the command's id; at most one in flight),
 * and sw_exec_dispatch runs the steps of the tasks waiting on it.
 * Killing is by process group: a timeout, kill() and the owner letting go (its handle
 * collected, its process ended however it ended) signal the whole group, and when the command
 * itself exits, whatever it left running in its group is killed too. A command the owner let
 * go of stays on the loop, unowned, until the kernel reports its exit (so it is reaped).
 * Thread: the worker running the owning process, unless said otherwise. */
#ifndef STEWARD_EXEC_H
#define STEWARD_EXEC_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "vm.h"

typedef struct sw_proc sw_proc;
typedef struct sw_delivery sw_delivery;
typedef struct sw_worker sw_worker;
typedef struct sw_child sw_child;

#define SW_EXEC_MAX_CHILDREN 64 /* commands a process holds at once */
#define SW_EXEC_PIPE_BUFFER \
    (64 * 1024)               /* spawn: unread bytes per stream before it stops
                                          * reading (backpressure); queued stdin before
                                          * write waits */
#define SW_EXEC_DRAIN_MS 1000 /* after the exit: how long output may still come */

#define SW_EXEC_ELIMIT  (-300001) /* the process holds SW_EXEC_MAX_CHILDREN commands */
#define SW_EXEC_ETHREAD (-300002) /* not called on the worker running the process */

typedef struct sw_exec_opts {
    const char *file;     /* the program: an absolute path */
    char **argv;          /* NULL-terminated, argv[0] included */
    char **env;           /* NULL-terminated NAME=value strings: the whole environment */
    const char *cwd;      /* or NULL: the host's */
    size_t max_output;    /* > 0: keep each stream whole up to this (run); 0: stream it (spawn) */
    int64_t timeout_ns;   /* < 0: none; once it passes, the group is killed */
    bool no_stdin;        /* stdin is /dev/null */
    sw_vm_budget *budget; /* max_output > 0: the output is taken from it; NULL: not counted */
} sw_exec_opts;

/* Starts a command for p on the current worker (which must run p), counted against
 * SW_EXEC_MAX_CHILDREN, pinning p. NULL with *err (a libuv error, SW_EXEC_*) on failure. */
sw_child *sw_exec_start(sw_proc *p, const sw_exec_opts *o, int *err);
/* The owner lets go (the handle's __gc, exec.run done): a command still running has its group
 * killed; it is freed once reaped. Idempotent on a NULL-ed reference. */
void sw_exec_release(sw_child *c);

/* ---- state ---- */

typedef enum { SW_EXEC_STDOUT, SW_EXEC_STDERR } sw_exec_stream;

int sw_exec_pid(const sw_child *c);
/* True once the command exited: *code its exit status, *signal the signal that ended it (0). */
bool sw_exec_exited(const sw_child *c, int64_t *code, int *signal);
bool sw_exec_timed_out(const sw_child *c);
/* A stream passed max_output: the group was killed. */
bool sw_exec_overflowed(const sw_child *c);
/* The budget had no room for the output (max_output > 0): the group was killed. */
bool sw_exec_out_of_memory(const sw_child *c);
/* Unread bytes of a stream, and dropping the first n (reading resumes when there is room). */
const char *sw_exec_peek(sw_child *c, sw_exec_stream s, size_t *len);
void sw_exec_consume(sw_child *c, sw_exec_stream s, size_t n);
/* 0 while more may come; UV_EOF at its end (also once the drain after the exit passed), or
 * a read error. Bytes already read stay readable. */
int sw_exec_stream_end(const sw_child *c, sw_exec_stream s);
/* Writes or queues len bytes (copied) to stdin: 0, 1 when queued beyond SW_EXEC_PIPE_BUFFER
 * (wait for sw_exec_drained), UV_EPIPE once stdin is closed, or a write error. */
int sw_exec_write(sw_child *c, const char *data, size_t len);
/* 1 when the queue is within SW_EXEC_PIPE_BUFFER, 0 while not, or the write error. */
int sw_exec_drained(const sw_child *c);
/* Closes stdin once what is queued is written. */
void sw_exec_close_stdin(sw_child *c);
/* Sends sig to the command's process group: 0, or a libuv error (UV_ESRCH once it is gone). */
int sw_exec_kill(sw_child *c, int sig);
sw_proc *sw_exec_owner(const sw_child *c);

/* The Lua object holding c keeps its pointer at *ref: set to NULL when c is let go. */
void sw_exec_bind(sw_child *c, sw_child **ref);

/* ---- blocking calls: steps, as in net.h ---- */

typedef enum { SW_EXEC_W_OUT, SW_EXEC_W_ERR, SW_EXEC_W_IN, SW_EXEC_W_EXIT } sw_exec_side;

typedef struct sw_exec_wait sw_exec_wait;
/* Pushes the call's results and returns how many, or -1 to keep waiting. May raise. */
typedef int (*sw_exec_step)(sw_exec_wait *w, lua_State *L);
struct sw_exec_wait {
    sw_task_wait base; /* first: the task layer hands this pointer to cancel */
    sw_child *child;
    sw_task *task; /* NULL: nobody waits on this side */
    sw_exec_step step;
};
/* The side's wait record: busy while ->task is set. */
sw_exec_wait *sw_exec_waiter(sw_child *c, sw_exec_side side);
/* Arms w for t: step runs at each delivery for the command until it has results. */
void sw_exec_arm(sw_exec_wait *w, sw_task *t, sw_exec_step step);

/* ---- the process's and worker's side ---- */

/* An EXEC delivery (mailbox.c): runs the steps of the tasks waiting on the command. */
void sw_exec_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d);
/* The process ended (its tasks are freed): every command it holds is let go (its group
 * killed), also after the runtime stopped the loops. Thread: the one ending p. */
void sw_exec_proc_end(sw_proc *p);
/* The worker stops (sw_workers_stop, before it closes the loop's handles): closes what
 * unowned commands still hold. Thread: the one stopping the workers. */
void sw_exec_worker_stop(sw_worker *w);

#endif
