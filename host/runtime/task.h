/* Tasks: the coroutines a process runs concurrently (its main function and each
 * coroutine.spawn). Every blocking host call blocks only its own task; the process waits when
 * all its tasks do. Everything here runs on the thread running the process. */
#ifndef STEWARD_TASK_H
#define STEWARD_TASK_H

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct sw_task sw_task;
typedef struct sw_proc sw_proc;

/* What a blocked task waits on, owned by whoever set it; `cancel` is called if the task is
 * woken by something else or freed while waiting (process end), and must unregister it. */
typedef struct sw_task_wait {
    void (*cancel)(struct sw_task_wait *w);
} sw_task_wait;

/* The task whose code is running on L, or NULL when L runs no task (host set-up code). */
sw_task *sw_task_current(lua_State *L);
sw_proc *sw_task_proc(const sw_task *t);

/* `return sw_task_block(L, wait);` suspends the calling task until sw_task_wake; the values
 * given to the wake become the C function's results. wait may be NULL (nothing to cancel).
 * Raises a Lua error when L is not inside a task or cannot yield here. */
int sw_task_block(lua_State *L, sw_task_wait *wait);
/* Makes a blocked task runnable with the n values on top of `from` (popped) as its results.
 * `from` must be a thread of the same process. Clears the task's wait without calling its
 * cancel. Returns false (and pops the values) if the task is not blocked. */
bool sw_task_wake(sw_task *t, lua_State *from, int n);
bool sw_task_blocked(const sw_task *t);

/* Timers and deliveries find tasks again by id: ids are unique within a process. */
uint64_t sw_task_id(const sw_task *t);
sw_task *sw_task_find(sw_proc *p, uint64_t id);

/* ---- for the process layer (proc.c) ---- */

struct sw_task {
    uint64_t id;
    sw_proc *proc;
    lua_State *co; /* anchored in the registry by ref */
    int ref;
    int nresume; /* values on co to pass at the next run */
    bool blocked, ready;
    sw_task_wait *wait;
    void *wait_mem; /* a wait's memory kept for the task's next one (channel.c);
                                  * freed with the task */
    sw_task *next_ready;
    sw_task *next, *prev; /* all tasks of the process */
};

/* A task for coroutine co (anchored by the caller as ref); not ready yet. */
sw_task *sw_task_new(sw_proc *p, lua_State *co, int ref);
/* Queues t to run with nresume values on its stack. */
void sw_task_make_ready(sw_task *t, int nresume);
sw_task *sw_task_pop_ready(sw_proc *p);
/* Puts a preempted task back at the head: it resumes before the process's other tasks, so a
 * preemption never interleaves them in the middle of its work (Lua code has no locks). */
void sw_task_requeue_first(sw_task *t);
/* Cancels t's wait, if any, and marks it not blocked. */
void sw_task_cancel_wait(sw_task *t);
/* Unlinks and frees t, releasing its coroutine (L: the vm's main state, or NULL when the
 * state is about to be closed anyway). */
void sw_task_free(sw_task *t, lua_State *L);

/* `coroutine.spawn(fn, ...)`: the module's C function. */
int sw_task_spawn_lua(lua_State *L);

#endif
