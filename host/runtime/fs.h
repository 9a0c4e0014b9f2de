/* Files of processes (the `fs` module, docs/lua-api.md "fs"): each call is a job (fs_job.h) run
 * on libuv's thread pool with uv_queue_work from the loop of the worker running the process,
 * blocking only the calling task. A process with a job in flight is pinned to that worker
 * (sw_proc.pins, shared with net.c), so the job's completion, the process's requests and its
 * open files are only ever touched on one thread. A finished job becomes an FS delivery to the
 * process (ref = the request), handled in its slice: the task waiting on it resumes.
 * The process owns its requests and open files: a request whose task or process went away
 * finishes unowned (what its job opened is closed), and sw_fs_proc_end closes every file the
 * process left open, whatever ended it. Bounded: SW_FS_MAX_FILES open files per process, and
 * whole-file reads capped (host config limits.fs_read: sw_limits).
 * Thread: the worker running the owning process, unless said otherwise. */
#ifndef STEWARD_FS_H
#define STEWARD_FS_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "fs_job.h"
#include "task.h"

typedef struct sw_proc sw_proc;
typedef struct sw_delivery sw_delivery;
typedef struct sw_worker sw_worker;
typedef struct sw_fs_req sw_fs_req;
typedef struct sw_fs_file sw_fs_file;

#define SW_FS_MAX_FILES 256       /* open files per process */
#define SW_FS_ELIMIT    (-200100) /* the process has SW_FS_MAX_FILES open files */
#define SW_FS_ETHREAD   (-200101) /* not called on a worker running the process */

/* An open file. Its read-ahead (read_line) is buf[start, end). */
struct sw_fs_file {
    sw_proc *proc; /* the owner; NULL once closed */
    int fd;
    bool readable, writable;
    sw_fs_req *busy;  /* the request using it now, or NULL */
    sw_fs_file **ref; /* the Lua object's pointer to it, cleared when it closes */
    char *buf;        /* read-ahead: at most SW_FS_LINE_MAX bytes */
    size_t start, end;
    sw_fs_file *next, *prev; /* the process's open files */
};

/* Pushes the call's results for the task waiting on r (its job is done) and returns how many.
 * May raise (memory): r is freed anyway. */
typedef int (*sw_fs_finish)(sw_fs_req *r, lua_State *L);

struct sw_fs_req {
    sw_fs_job job;
    sw_fs_file *file; /* the file a file op works on (busy meanwhile), or NULL */
    char *resource;   /* owned: what errors name ("app:data:x.txt"), or NULL */
    sw_task_wait wait;
    /* Below: fs.c's. */
    uv_work_t work;
    sw_proc *proc;     /* the owner; NULL once the process ended (the job finishes unowned) */
    sw_worker *worker; /* whose loop runs it */
    sw_task *task;     /* waiting for it; NULL once the task went away */
    sw_fs_finish finish;
    bool done;
    int close_fd; /* an fd to close once the job is done (its file's process ended), or -1 */
    sw_fs_req *next, *prev; /* the process's requests */
};

/* A request of p for op (job zeroed, fd -1). NULL when out of memory. */
sw_fs_req *sw_fs_req_new(sw_proc *p, sw_fs_op op);
/* Frees a request that was never submitted. */
void sw_fs_req_free(sw_fs_req *r);
/* Queues r's job (r->file, if set, is busy until it is done) for task t on the current
 * worker's loop, pinning the process. 0, or SW_FS_ETHREAD / a libuv error (r is freed). On
 * success `return sw_task_block(L, &r->wait);`: finish gives the task its results. */
int sw_fs_submit(sw_fs_req *r, sw_task *t, sw_fs_finish finish);

/* ---- open files ---- */

/* Takes fd as a new open file of p, counted against SW_FS_MAX_FILES: NULL with *err
 * (SW_FS_ELIMIT, or -ENOMEM) and fd left to the caller. */
sw_fs_file *sw_fs_file_new(sw_proc *p, int fd, bool readable, bool writable, int *err);
/* The Lua object holding f keeps its pointer at *ref: set to NULL when f closes. */
void sw_fs_file_bind(sw_fs_file *f, sw_fs_file **ref);
/* Closes f (not busy): it leaves the process's files at once; its fd is closed by a job on
 * the current loop, or here when there is no loop (the runtime stopped). */
void sw_fs_file_close(sw_fs_file *f);
/* Drops the read-ahead (after a seek or before a write, which account for it). */
void sw_fs_file_drop_buffer(sw_fs_file *f);
size_t sw_fs_file_count(const sw_proc *p);

/* ---- the process's side ---- */

/* An FS delivery (mailbox.c): the task waiting on the request it names resumes with its
 * results; the request is freed. Runs inside the process's Lua state (may raise: memory). */
void sw_fs_dispatch(sw_proc *p, lua_State *L, const sw_delivery *d);
/* The process ended (its tasks are freed): its requests finish unowned, its files close. Also
 * after the runtime stopped its workers' loops. Thread: the one ending p. */
void sw_fs_proc_end(sw_proc *p);

#endif
