/* One Lua process's state: a LuaJIT state made with our allocator (byte count, memory
 * limit, collection requests), created with the sandbox's globals (vm_sandbox.c) and a main
 * coroutine, then run in slices: start, resume, tasks, blocking host calls, and the outcome
 * (final status, error description). The hook that preempts and kills is vm_hook.c's.
 * Builds on the Lua 5.1 C API plus LuaJIT's lua_isyieldable and luaJIT_setmode. */
#include "vm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <luajit.h>

/* ---- allocator ------------------------------------------------------------------------ */

/* The state is about to hold `want` bytes, more than it has taken from the host's budget:
 * take the steps it lacks. 0 when the cap refuses them (the allocation then fails). Kept out
 * of line, as budget_shrink: inlined, they made every vm_alloc save more registers. */
__attribute__((noinline, cold)) static int budget_grow(sw_vm *vm, size_t want)
{
    size_t to = (want + SW_VM_BUDGET_STEP - 1) / SW_VM_BUDGET_STEP * SW_VM_BUDGET_STEP;
    sw_vm_budget *no =
        sw_vm_budget_take_all(vm->budget, to - vm->taken, !vm->budget_strict || vm->lifted);
    if (no) {
        vm->refused_by = no;
        return 0;
    }
    vm->taken = to;
    vm->give_below = to > 2 * SW_VM_BUDGET_STEP ? to - 2 * SW_VM_BUDGET_STEP : 0;
    return 1;
}

static void raise_peak(sw_vm_budget *b, size_t used)
{
    size_t peak = atomic_load_explicit(&b->peak, memory_order_relaxed);
    while (used > peak && !atomic_compare_exchange_weak_explicit(
                              &b->peak, &peak, used, memory_order_relaxed, memory_order_relaxed)) {
    }
}

sw_vm_budget *sw_vm_budget_take_all(sw_vm_budget *b, size_t n, bool force)
{
    for (sw_vm_budget *at = b; at; at = at->parent) {
        if (sw_vm_budget_take(at, n, force)) continue;
        atomic_store_explicit(&at->refused, true, memory_order_relaxed);
        for (sw_vm_budget *back = b; back != at; back = back->parent)
            atomic_fetch_sub_explicit(&back->used, n, memory_order_relaxed);
        return at;
    }
    for (sw_vm_budget *at = b; at; at = at->parent)
        raise_peak(at, atomic_load_explicit(&at->used, memory_order_relaxed));
    return NULL;
}

/* Two steps or more to spare: keep one. */
__attribute__((noinline, cold)) static void budget_shrink(sw_vm *vm)
{
    size_t to = (vm->mem + 2 * SW_VM_BUDGET_STEP - 1) / SW_VM_BUDGET_STEP * SW_VM_BUDGET_STEP;
    sw_vm_budget_give(vm->budget, vm->taken - to);
    vm->taken = to;
    vm->give_below = to > 2 * SW_VM_BUDGET_STEP ? to - 2 * SW_VM_BUDGET_STEP : 0;
}

/* Counts every byte of the state. Growing over the limit fails (LuaJIT raises "not enough
 * memory") and marks the process: it will fail with "memory limit exceeded" even if user
 * code catches that error. Shrinking and freeing always succeed. Past gc_at it asks for a
 * collection, as LuaJIT never collects on a failed allocation. Blocks come from the state's
 * heap (vm_heap.c): creating a state makes ~320 allocations, which malloc made the larger part of it.
 * With a host budget, growing past what the state has taken from it takes more steps first
 * (budget_grow), and a free that leaves two steps spare gives one back: one compare each here. */
static void *vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    sw_vm *vm = ud;
    size_t old = ptr ? osize : 0;
    void *p;
    if (nsize == 0) {
        if (ptr) {
            vm->mem -= old;
            sw_heap_free(&vm->heap, ptr, old);
            if (vm->mem < vm->give_below) budget_shrink(vm);
        }
        return NULL;
    }
    if (nsize > old) {
        size_t want = vm->mem - old + nsize;
        if (vm->limit && want > vm->limit) {
            vm->oom = 1;
            return NULL;
        }
        if (want > vm->taken && !budget_grow(vm, want)) {
            vm->oom = 2;
            return NULL;
        }
    }
    p = ptr ? sw_heap_realloc(&vm->heap, ptr, old, nsize) : sw_heap_alloc(&vm->heap, nsize);
    if (!p) return NULL;
    vm->mem = vm->mem - old + nsize;
    if (vm->limit && vm->mem > vm->gc_at && !vm->gc_wanted) vm_gc_request(vm);
    return p;
}

sw_vm *sw_vm_of(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

void *sw_vm_owner(lua_State *L) { return sw_vm_of(L)->owner; }
void *sw_vm_owner_of(const sw_vm *vm) { return vm->owner; }

size_t vm_limit_lift(sw_vm *vm)
{
    size_t lim = vm->limit;
    vm->limit = 0;
    vm->lifted = 1;
    return lim;
}

void vm_limit_restore(sw_vm *vm, size_t lim)
{
    vm->limit = lim;
    vm->lifted = 0;
}

const char *vm_oom_text(const sw_vm *vm)
{
    if (vm->oom != 2) return "memory limit exceeded";
    return vm->refused_by && vm->refused_by->refusal ? vm->refused_by->refusal
                                                     : "host memory limit reached";
}

/* ---- creating and freeing ------------------------------------------------------------- */

/* Everything sw_vm_new builds, under lua_cpcall so running out of memory is an error. */
static int vm_setup(lua_State *L)
{
    sw_vm *vm = lua_touserdata(L, 1);
    vm_sandbox_open(L);
    if (vm->jit) {
        vm_sandbox_jit(L); /* CPU detection and JIT on; then hidden */
    } else {
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
        if (vm_counting(vm)) vm_hook_set(vm, vm->reductions);
    }
    return 0;
}

/* lua_close frees every object; the heap's blocks then go all at once with its chunks. */
static void close_state(sw_vm *vm)
{
    sw_heap_closing(&vm->heap);
    lua_close(vm->L);
    vm->L = NULL;
}

sw_vm *sw_vm_new(const sw_vm_limits *lim, void *owner)
{
    sw_vm *vm = aligned_alloc(SW_VM_LINE, (sizeof *vm + SW_VM_LINE - 1) / SW_VM_LINE * SW_VM_LINE);
    if (!vm) return NULL;
    memset(vm, 0, sizeof *vm);
    vm->owner = owner;
    vm->reductions = !lim ? SW_VM_REDUCTIONS_DEFAULT : lim->reductions > 0 ? lim->reductions : 0;
    vm->jit = lim ? lim->jit : 0;
    atomic_init(&vm->killed, 0);
    atomic_flag_clear(&vm->hook_lock);
    sw_heap_init(&vm->heap, 0);
    vm->taken = SIZE_MAX; /* no budget until sw_vm_set_budget */
    vm->L = lua_newstate(vm_alloc, vm);
    if (!vm->L || lua_cpcall(vm->L, vm_setup, vm) != 0) {
        if (vm->L) close_state(vm);
        sw_heap_release(&vm->heap);
        free(vm);
        return NULL;
    }
    vm->limit = lim ? lim->memory : 0; /* from here on: creation itself never hits it */
    vm->gc_at = vm->limit / 2;
    return vm;
}

void sw_vm_set_budget(sw_vm *vm, sw_vm_budget *budget)
{
    vm->budget = budget;
    vm->taken = 0;
    budget_grow(vm, vm->mem); /* not strict yet: taken even past the cap */
    vm->budget_strict = 1;
}

void sw_vm_free(sw_vm *vm)
{
    if (!vm) return;
    vm->limit = 0; /* finalizers of host userdata may still allocate */
    vm->budget_strict = 0;
    close_state(vm);
    sw_heap_release(&vm->heap);
    if (vm->budget) sw_vm_budget_give(vm->budget, vm->taken);
    free(vm->errmsg);
    free(vm);
}

lua_State *sw_vm_lua(sw_vm *vm) { return vm->L; }
lua_State *sw_vm_thread(sw_vm *vm) { return vm->co; }
size_t sw_vm_memory(const sw_vm *vm) { return vm->mem; }
const char *sw_vm_error(sw_vm *vm) { return vm->errmsg; }
const char *sw_vm_oom_error(const sw_vm *vm) { return vm->oom ? vm_oom_text(vm) : NULL; }
void sw_vm_set_libs(sw_vm *vm, const sw_vm_lib *libs) { vm->libs = libs; }

/* ---- running: start, resume, block, outcome ------------------------------------------- */

static void set_error(sw_vm *vm, const char *msg)
{
    free(vm->errmsg);
    vm->errmsg = strdup(msg);
}

/* A final status: the process will not run again, so its limit and hook go away (the host
 * reads results and errors without tripping either). */
static sw_vm_status finish(sw_vm *vm, sw_vm_status st)
{
    vm->phase = PHASE_OVER;
    vm->final = st;
    vm->limit = 0;
    vm->budget_strict = 0;
    vm_hook_arm(vm, 0);
    if (st == SW_VM_KILLED) set_error(vm, "killed");
    return st;
}

/* The text of the error value at the top of the main coroutine, with its traceback, without
 * ever calling a metamethod (security case S13: a __tostring that loops must not hang the
 * host). */
static int describe(lua_State *L)
{
    sw_vm *vm = lua_touserdata(L, 1);
    char head[64];
    const char *msg = head;
    if (lua_gettop(vm->co) == 0) lua_pushliteral(vm->co, "unknown error");
    lua_xmove(vm->co, L, 1); /* take the value, give it back: a number must stay a number */
    lua_pushvalue(L, -1);
    lua_xmove(L, vm->co, 1);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
        msg = lua_tostring(L, -1);
    } else {
        snprintf(head, sizeof head, "(error object is a %s value)", luaL_typename(L, -1));
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushliteral(L, "message");
            lua_rawget(L, -2);
            if (lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
        }
    }
    luaL_traceback(L, vm->co, msg, 0);
    set_error(vm, lua_tostring(L, -1));
    return 0;
}

/* FAILED. msg, if given, becomes the raw error value (pushed on the main coroutine);
 * otherwise the error lua_resume left there is described. */
static sw_vm_status fail(sw_vm *vm, const char *msg)
{
    finish(vm, SW_VM_FAILED);
    if (!vm->co) { /* never started: nothing to describe */
        set_error(vm, msg ? msg : "error");
        return SW_VM_FAILED;
    }
    if (msg && lua_checkstack(vm->co, 2)) {
        lua_pushstring(vm->L, msg);
        lua_xmove(vm->L, vm->co, 1);
    }
    if (lua_cpcall(vm->L, describe, vm) != 0) {
        lua_pop(vm->L, 1);
        set_error(vm, msg ? msg : "error (no memory left to describe it)");
    }
    return SW_VM_FAILED;
}

static sw_vm_status after_slice(sw_vm *vm, int rc)
{
    int why = vm->why;
    vm->why = WHY_USER;
    if (atomic_load(&vm->killed)) return finish(vm, SW_VM_KILLED);
    if (vm->oom) return fail(vm, vm_oom_text(vm));
    if (rc == LUA_YIELD && why == WHY_PREEMPT) return vm->last = SW_VM_PREEMPTED;
    if (rc == LUA_YIELD && why == WHY_BLOCK) return vm->last = SW_VM_BLOCKED;
    if (rc == LUA_YIELD) return fail(vm, "attempt to yield from outside a coroutine");
    if (rc == 0) return finish(vm, SW_VM_DONE);
    return fail(vm, NULL);
}

sw_vm_status sw_vm_start(sw_vm *vm, int nargs)
{
    lua_State *L = vm->L;
    size_t lim;
    if (vm->phase != PHASE_NEW) return SW_VM_FAILED;
    vm->phase = PHASE_LIVE;
    if (nargs < 0 || lua_gettop(L) < nargs + 1 || !lua_isfunction(L, -(nargs + 1)))
        return fail(vm, "sw_vm_start: no function to run");
    if (atomic_load(&vm->killed)) {
        lua_pop(L, nargs + 1);
        return finish(vm, SW_VM_KILLED);
    }
    lim = vm_limit_lift(vm);
    if (!vm->co) { /* made here, not at creation: the runtime runs tasks of its own instead */
        vm->co = lua_newthread(L);
        luaL_ref(L, LUA_REGISTRYINDEX); /* pops it */
    }
    if (!lua_checkstack(vm->co, nargs + 1)) {
        vm_limit_restore(vm, lim);
        return fail(vm, "sw_vm_start: too many arguments");
    }
    lua_xmove(L, vm->co, nargs + 1);
    vm_limit_restore(vm, lim);
    return after_slice(vm, vm_run_slice(vm, nargs));
}

/* Leaves only the top n values on the main coroutine (the resume values). */
static void keep_top(sw_vm *vm, int n)
{
    lua_State *co = vm->co;
    size_t lim;
    if (lua_gettop(co) == n) return;
    lim = vm_limit_lift(vm);
    lua_checkstack(vm->L, n);
    lua_xmove(co, vm->L, n);
    lua_settop(co, 0);
    lua_xmove(vm->L, co, n);
    vm_limit_restore(vm, lim);
}

int sw_vm_reserve(sw_vm *vm, lua_State *co, int n)
{
    size_t lim = vm_limit_lift(vm);
    int ok = lua_checkstack(co, n);
    vm_limit_restore(vm, lim);
    return ok;
}

sw_vm_status sw_vm_resume(sw_vm *vm, int nvalues)
{
    if (vm->phase == PHASE_OVER) return vm->final;
    if (vm->phase == PHASE_NEW) return SW_VM_FAILED;
    if (atomic_load(&vm->killed)) return finish(vm, SW_VM_KILLED);
    if (vm->last == SW_VM_PREEMPTED || nvalues < 0)
        nvalues = 0; /* a hook yield must be resumed with nothing */
    if (nvalues > lua_gettop(vm->co)) nvalues = lua_gettop(vm->co);
    keep_top(vm, nvalues);
    return after_slice(vm, vm_run_slice(vm, nvalues));
}

int sw_vm_block(lua_State *L, int nresults)
{
    sw_vm *vm = sw_vm_of(L);
    if (!lua_isyieldable(L))
        return luaL_error(L, "cannot block here: inside a C call (sort comparator, gsub "
                             "callback, error handler) or outside the process");
    vm->why = WHY_BLOCK;
    return lua_yield(L, nresults);
}

/* ---- tasks: several coroutines run as roots ---------------------------------------------
 * A process may run several tasks (its main function, coroutine.spawn): each is a coroutine
 * of the main state that the host resumes directly. While one runs it is `vm->co`, so host
 * yields, preemption, kills and error descriptions work exactly as for the main coroutine. */

static sw_vm_status task_after_slice(sw_vm *vm, int rc)
{
    if (rc != 0 || atomic_load(&vm->killed) || vm->oom) return after_slice(vm, rc);
    vm->why = WHY_USER;
    return SW_VM_DONE; /* one task returned; the process goes on */
}

sw_vm_status sw_vm_run(sw_vm *vm, lua_State *co, int nargs)
{
    if (vm->phase == PHASE_OVER) return vm->final;
    vm->phase = PHASE_LIVE;
    if (atomic_load(&vm->killed)) return finish(vm, SW_VM_KILLED);
    lua_State *saved = vm->co;
    vm->co = co;
    if (lua_status(co) == LUA_YIELD) {
        if (nargs > lua_gettop(co)) nargs = lua_gettop(co);
        keep_top(vm, nargs);
    }
    sw_vm_status st = task_after_slice(vm, vm_run_slice(vm, nargs));
    vm->co = saved;
    return st;
}

void sw_vm_finish(sw_vm *vm)
{
    if (vm->phase != PHASE_OVER) finish(vm, SW_VM_DONE);
}
