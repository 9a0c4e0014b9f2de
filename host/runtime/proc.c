/* Process lifecycle: spawn (vm, chunk, arguments) and the slice a worker runs (deliveries,
 * then ready tasks); the end is proc_exit.c's. The chunk
 * runs first as the main task; its returned function (or `main`, or `method`) then runs as
 * the main task with the arguments. */
#include "proc_internal.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "mailbox.h"
#include "http_client.h"
#include "lua_chunk.h"
#include "message.h"
#include "net.h"
#include "runtime.h"
#include "task.h"

enum { PHASE_LOAD, PHASE_MAIN };
#define TASK_RUNS_PER_SLICE 64

sw_proc *sw_proc_of(lua_State *L) { return sw_vm_owner(L); }
const sw_proc_ctx *sw_proc_ctx_of(lua_State *L) { return &sw_proc_of(L)->ctx; }

void pidvec_push(pidvec *v, uint64_t x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->v = realloc(v->v, v->cap * sizeof *v->v);
        if (!v->v) abort();
    }
    v->v[v->n++] = x;
}

bool pidvec_remove(pidvec *v, uint64_t x)
{
    for (size_t i = 0; i < v->n; i++) {
        if (v->v[i] != x) continue;
        memmove(v->v + i, v->v + i + 1, (v->n - i - 1) * sizeof *v->v);
        v->n--;
        return true;
    }
    return false;
}

bool pidvec_remove_pair(pidvec *a, pidvec *b, uint64_t x, uint64_t y)
{
    for (size_t i = 0; i < a->n; i++) {
        if (a->v[i] != x || b->v[i] != y) continue;
        memmove(a->v + i, a->v + i + 1, (a->n - i - 1) * sizeof *a->v);
        memmove(b->v + i, b->v + i + 1, (b->n - i - 1) * sizeof *b->v);
        a->n--;
        b->n--;
        return true;
    }
    return false;
}

void pidvec_free(pidvec *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

void sw_proc_retain(sw_proc *p) { atomic_fetch_add(&p->refs, 1); }

static void proc_destroy(sw_proc *p)
{
    sw_delivery_free_list(p->mailbox.head);
    pthread_mutex_destroy(&p->lock);
    sw_registry_free(p->ctx.registry);
    sw_sec_identity_release(p->identity);
    free(p);
}

void sw_proc_release(sw_proc *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1) proc_destroy(p);
}

uint64_t sw_proc_new_ref(sw_proc *p) { return ++p->next_ref; }

/* ---- Lua-side per-process values: inbox, events, timers ---- */

static void push_lazy_channel(sw_proc *p, lua_State *L, int *ref)
{
    if (*ref == LUA_NOREF) {
        sw_chan_push_new(L, SW_CHAN_UNBOUNDED);
        lua_pushvalue(L, -1);
        *ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return;
    }
    (void)p;
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref);
}

void sw_proc_push_inbox(sw_proc *p, lua_State *L) { push_lazy_channel(p, L, &p->inbox_ref); }
void sw_proc_push_events(sw_proc *p, lua_State *L) { push_lazy_channel(p, L, &p->events_ref); }

/* ---- running ---- */

/* The chunk ran: pick what to call (its returned function, `method` of the returned table, or
 * `main`) and make it the main task with the arguments. */
static int start_main(lua_State *L)
{
    sw_proc *p = lua_touserdata(L, 1);
    lua_State *chunk_co = p->main->co;
    const char *method = p->entry->as.process_lua.method;
    lua_settop(L, 1);
    if (lua_gettop(chunk_co) >= 1) lua_xmove(chunk_co, L, 1);
    else lua_pushnil(L);
    lua_settop(chunk_co, 0);
    if (lua_istable(L, 2)) lua_getfield(L, 2, method ? method : "main");
    else if (method)
        return luaL_error(L, "method %s: the chunk returned %s, not a table", method,
                          luaL_typename(L, 2));
    else lua_pushvalue(L, 2);
    if (!lua_isfunction(L, -1))
        return luaL_error(L, "%s: the chunk must return a function, or a table with %s",
                          p->entry->id, method ? method : "main");
    if (p->main_hook) { /* the host's code around it (sw_spawn.main_hook) */
        lua_pushcfunction(L, p->main_hook);
        lua_insert(L, -2);
        lua_call(L, 1, 1);
    }
    /* The chunk's task is over: its coroutine runs main next (a new one would leave the old
     * as garbage in every idle process), under a new id for whoever kept the chunk's. */
    sw_task *main = p->main;
    lua_State *co = chunk_co;
    lua_xmove(L, co, 1);
    int nargs = 0;
    if (p->args) {
        nargs = sw_msg_decode(co, p->args, p->args_len);
        if (nargs < 0) return luaL_error(L, "corrupt arguments");
    } else {
        luaL_checkstack(co, p->argc, "too many arguments");
        for (int i = 0; i < p->argc; i++) lua_pushstring(co, p->argv[i]);
        nargs = p->argc;
    }
    main->id = ++p->next_task_id;
    p->phase = PHASE_MAIN;
    sw_task_make_ready(main, nargs);
    return 0;
}

/* One task ended; returns false if that ended the process. */
static bool task_ended(sw_proc *p, sw_task *t, sw_vm_status st)
{
    lua_State *L = sw_vm_lua(p->vm);
    if (st == SW_VM_KILLED) {
        proc_exit_failed(p, NULL, "killed", SW_EXIT_KILLED);
        return false;
    }
    if (st == SW_VM_FAILED) {
        proc_exit_failed(p, t->co, sw_vm_error(p->vm), SW_EXIT_FAILED);
        return false;
    }
    if (t != p->main) {
        sw_task_free(t, L);
        return true;
    }
    if (p->phase == PHASE_LOAD) {
        if (lua_cpcall(L, start_main, p) == 0) return true;
        proc_exit_failed(p, NULL, lua_tostring(L, -1), SW_EXIT_FAILED);
        return false;
    }
    proc_exit_returned(p, t->co);
    return false;
}

/* Runs ready tasks; returns false if the process ended. */
static bool run_tasks(sw_proc *p)
{
    for (int runs = 0; runs < TASK_RUNS_PER_SLICE; runs++) {
        sw_task *t = sw_task_pop_ready(p);
        if (!t) break;
        p->current = t;
        sw_worker_slice_begin(p->worker, p->vm);
        sw_vm_status st = sw_vm_run(p->vm, t->co, t->nresume);
        sw_worker_slice_end(p->worker);
        p->current = NULL;
        if (st != SW_VM_BLOCKED && t->blocked)
            sw_task_cancel_wait(t); /* a block that failed to yield */
        if (st == SW_VM_PREEMPTED) {
            sw_task_requeue_first(t);
            break; /* the slice is used up: others on this worker go next */
        }
        if (st == SW_VM_BLOCKED) continue;
        if (!task_ended(p, t, st)) return false;
    }
    return true;
}

/* Its deliveries, then its tasks; false when the process is over. */
static bool run_slice(sw_proc *p)
{
    if (!sw_mailbox_take(p)) return false;
    lua_State *L = sw_vm_lua(p->vm);
    if (lua_cpcall(L, sw_mailbox_dispatch, p) != 0) {
        const char *why = sw_vm_oom_error(p->vm);
        proc_exit_failed(p, NULL, why ? why : "memory limit exceeded", SW_EXIT_FAILED);
        return false;
    }
    if (p->kill_requested) {
        proc_exit_failed(p, NULL, "killed", SW_EXIT_KILLED);
        return false;
    }
    if (p->doom) {
        proc_exit_failed(p, NULL, p->doom, SW_EXIT_FAILED);
        return false;
    }
    if (!run_tasks(p)) return false;
    if (sw_mailbox_park(p, p->ready_head != NULL)) sw_worker_enqueue(p->worker, p);
    return true;
}

/* A process of a tree over its service's memory limit ended: the run ends with it
 * (docs/supervision.md "Resources"), so its own process is killed, once. */
static void ended_in_tree(sw_proc *p, sw_svc_count *c)
{
    if (atomic_load_explicit(&c->memory.refused, memory_order_relaxed) &&
        !atomic_exchange(&c->root_doomed, true))
        sw_tree_kill_root(p->rt, c);
}

void sw_proc_run(sw_proc *p)
{
    if (!run_slice(p) && p->svc) ended_in_tree(p, p->svc);
}

void sw_proc_charge(sw_vm *vm, uint64_t ns)
{
    sw_proc *p = sw_vm_owner_of(vm);
    if (p->svc) atomic_fetch_add_explicit(&p->svc->cpu_ns, ns, memory_order_relaxed);
}

/* ---- spawning ---- */

static int copy_args(sw_proc *p, const sw_spawn *s)
{
    if (s->args) {
        p->args = malloc(s->args_len ? s->args_len : 1);
        if (!p->args) return -1;
        memcpy(p->args, s->args, s->args_len);
        p->args_len = s->args_len;
        return 0;
    }
    p->argc = s->argc;
    p->argv = s->argv; /* the CLI's argv outlives every process */
    return 0;
}

/* limits.mailbox of the entry, else the host's; its bytes at most limits.memory: what waits
 * for a process counts against its own limit. */
static void mailbox_bounds(sw_proc *p, const sw_process_lua *pl)
{
    const sw_limits *l = &p->rt->limits;
    p->mailbox.max_msgs =
        (size_t)(pl->limits.mailbox.messages ? pl->limits.mailbox.messages : l->mailbox_messages);
    uint64_t bytes = pl->limits.mailbox.bytes ? pl->limits.mailbox.bytes : l->mailbox_bytes;
    if (pl->limits.memory && pl->limits.memory < bytes) bytes = pl->limits.memory;
    p->mailbox.max_bytes = (size_t)bytes;
}

static sw_proc *proc_alloc(sw_runtime *rt, const sw_spawn *s)
{
    sw_proc *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->lock, NULL);
    p->rt = rt;
    p->entry = s->entry;
    p->inbox_ref = p->events_ref = p->timers_ref = LUA_NOREF;
    p->on_exit = s->on_exit;
    p->on_ready = s->on_ready;
    p->cb_arg = s->cb_arg;
    p->service = s->service ? strdup(s->service) : NULL;
    p->main_hook = s->main_hook;
    p->main_hook_arg = s->main_hook_arg;
    p->identity = sw_sec_identity_retain(s->identity);
    mailbox_bounds(p, &s->entry->as.process_lua);
    /* the process reads, spawns from and keeps the code of one snapshot all its life */
    p->ctx.registry = s->registry ? sw_registry_retain(s->registry) : sw_runtime_registry(rt);
    return p;
}

typedef struct load_job {
    sw_proc *p;
    char *err;
    size_t errlen;
} load_job;

/* lua_cpcall: compiles the chunk and makes it the first run of the main task, and creates
 * the per-process tables. Protected from the first allocation: the state has its memory
 * limit already. */
static int prepare_state(lua_State *L)
{
    load_job *j = lua_touserdata(L, 1);
    sw_proc *p = j->p;
    size_t len;
    const char *shipped = p->entry->as.process_lua.source.shipped;
    const unsigned char *bc = shipped ? sw_lua_chunk(shipped, &len)
                                      : sw_runtime_code(p->rt, p->entry, &len, j->err, j->errlen);
    if (!bc && shipped) snprintf(j->err, j->errlen, "no lua/%s.lua in this build", shipped);
    if (!bc || sw_vm_load_compiled(p->vm, p->entry->id, bc, len, j->err, j->errlen) != 0)
        return luaL_error(L, "%s", j->err);
    if (p->entry->kind == SW_KIND_TEST_LUA && p->rt->test_main) {
        lua_pushcfunction(L, p->rt->test_main); /* the runner, around the chunk */
        lua_insert(L, -2);
        lua_call(L, 1, 1);
    }
    lua_newtable(L);
    p->timers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_State *co = lua_newthread(L);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_xmove(L, co, 1); /* the chunk */
    p->main = sw_task_new(p, co, ref);
    if (!p->main) return luaL_error(L, "out of memory");
    sw_task_make_ready(p->main, 0);
    return 0;
}

static int load_chunk(sw_proc *p, char *err, size_t errlen)
{
    load_job j = {p, err, errlen};
    lua_State *L = sw_vm_lua(p->vm);
    if (lua_cpcall(L, prepare_state, &j) == 0) return 0;
    snprintf(err, errlen, "%s",
             lua_isstring(L, -1) ? lua_tostring(L, -1) : "memory limit exceeded");
    lua_pop(L, 1);
    return -1;
}

static void spawn_failed(sw_proc *p)
{
    proc_free_state(p);
    sw_proc_release(p);
}

/* lifecycle.limits.processes and .memory of the service, each else of the nearest group
 * around it that sets it, else the host's default (processes) or none (memory). */
static void service_limits(sw_runtime *rt, const sw_registry *reg, const char *service,
                           int64_t *max, uint64_t *memory)
{
    *max = 0;
    *memory = 0;
    for (const sw_entry *e = sw_registry_get(reg, service); e; e = e->parent) {
        const sw_lifecycle *lc = sw_entry_is_service(e)     ? &e->as.service.lifecycle
                                 : e->kind == SW_KIND_GROUP ? &e->as.group.lifecycle
                                                            : NULL;
        if (lc && !*max) *max = lc->limits.processes;
        if (lc && !*memory) *memory = lc->limits.memory;
    }
    if (!*max) *max = rt->limits.service_processes;
}

/* The limits a new process must pass before its state is made: the host's count, room under
 * the memory cap, and its service's count when a process spawns it. 0, or -1 with err. */
static int admit(sw_proc *p, const sw_spawn *s, char *err, size_t errlen)
{
    sw_runtime *rt = p->rt;
    if (!sw_count_take(&rt->procs, rt->limits.processes)) {
        snprintf(err, errlen, "process limit reached");
        return -1;
    }
    p->counted = true;
    if (atomic_load_explicit(&rt->memory.used, memory_order_relaxed) + SW_LIMIT_SPAWN_BYTES >
        rt->memory.cap) {
        snprintf(err, errlen, "host memory limit reached");
        return -1;
    }
    sw_svc_count *c = s->parent ? s->parent->svc : NULL;
    if (c && atomic_load_explicit(&c->ending, memory_order_relaxed)) {
        snprintf(err, errlen, "service is stopping");
        return -1;
    }
    if (c) {
        if (!sw_count_take(&c->live, atomic_load_explicit(&c->max, memory_order_relaxed))) {
            snprintf(err, errlen, "process limit reached");
            return -1;
        }
        p->svc_counted = true;
        sw_svc_note_live(c, atomic_load_explicit(&c->live, memory_order_relaxed));
    } else if (!s->parent && (s->service || s->tree)) {
        const char *id = s->service ? s->service : s->tree;
        int64_t max;
        uint64_t memory;
        service_limits(rt, p->ctx.registry, id, &max, &memory);
        c = sw_svc_count_get(&rt->services, id, max, memory);
    }
    p->svc = c;
    return 0;
}

sw_proc *sw_proc_prepare(sw_runtime *rt, const sw_spawn *s, char *err, size_t errlen)
{
    sw_proc *p = proc_alloc(rt, s);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (admit(p, s, err, errlen) != 0) {
        spawn_failed(p);
        return NULL;
    }
    const sw_process_lua *pl = &s->entry->as.process_lua;
    sw_vm_limits lim = {(size_t)pl->limits.memory, (int)pl->limits.reductions, pl->jit};
    p->vm = sw_vm_new(&lim, p);
    if (!p->vm || copy_args(p, s) != 0) {
        snprintf(err, errlen, "out of memory");
        spawn_failed(p);
        return NULL;
    }
    sw_vm_set_budget(p->vm, p->svc ? &p->svc->memory : &rt->memory);
    sw_vm_set_libs(p->vm, rt->libs);
    if (load_chunk(p, err, errlen) != 0) {
        spawn_failed(p);
        return NULL;
    }
    return p;
}

/* The worker a new process starts on: its process.host's pool, else, for a `jit: true`
 * entry, the JIT pool (a compiled trace is not preempted: it must not hold an interpreted
 * process's worker), else the spawner's worker when given, else the default host's. */
static sw_worker *place(sw_runtime *rt, const sw_spawn *s)
{
    if (s->pool) return sw_workers_pick(s->pool);
    if (rt->has_jit_workers && s->entry && s->entry->as.process_lua.jit)
        return sw_workers_pick(&rt->jit_workers);
    return s->worker ? s->worker : sw_workers_pick(&rt->workers);
}

void sw_proc_discard_prepared(sw_proc *p) { spawn_failed(p); }

uint64_t sw_proc_launch(sw_proc *p, const sw_spawn *s)
{
    sw_runtime *rt = p->rt;
    sw_proc_retain(p); /* the pid table's reference */
    p->id = sw_pidtable_add(&rt->pids, p);
    sw_pid_format(p->id, p->pid, sizeof p->pid);
    p->ctx.pid = p->pid;
    p->ctx.service = p->service;
    p->ctx.log = rt->log;
    p->ctx.allowed = rt->guard;
    p->ctx.visible = rt->visible;
    if (s->monitor_by) {
        pidvec_push(&p->watchers, s->monitor_by);
        pidvec_push(&p->watcher_refs, s->monitor_ref);
    }
    if (s->link_to) pidvec_push(&p->links, s->link_to);
    p->worker = place(rt, s);
    uint64_t id = p->id;
    sw_worker_enqueue(p->worker, p);
    sw_proc_release(p); /* ours: the queue and the table hold it now */
    return id;
}

uint64_t sw_proc_spawn(sw_runtime *rt, const sw_spawn *s, char *err, size_t errlen)
{
    sw_proc *p = sw_proc_prepare(rt, s, err, errlen);
    return p ? sw_proc_launch(p, s) : 0;
}
