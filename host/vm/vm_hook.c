/* The process's hook and what it is for: preemption (a count hook, or an interrupt from a
 * timer thread), kill, the full collection the allocator asks for, and the C stack check of
 * callbacks. Also the bracket around each lua_resume of a slice (vm_run_slice).
 * Counting (reductions > 0, no JIT): a count hook fires every `reductions` instructions and
 * only this vm's thread sets hooks. Otherwise the hook is armed on demand, to fire at the
 * next instruction: by sw_vm_interrupt or sw_vm_kill from other threads, or by the allocator;
 * hook_lock serialises all those lua_sethook calls. */
#include "vm_internal.h"
#include "vm_pattern.h"

#include <lauxlib.h>

#define RETRY_COUNT  1000 /* reductions = 0: instructions before retrying a refused yield */
#define CSTACK_LIMIT ((uintptr_t)1 << 20) /* C stack a slice may use below its resume */

static void vm_hook(lua_State *L, lua_Debug *ar);

static void hook_lock(sw_vm *vm)
{
    while (atomic_flag_test_and_set_explicit(&vm->hook_lock, memory_order_acquire))
        ;
}

static void hook_unlock(sw_vm *vm)
{
    atomic_flag_clear_explicit(&vm->hook_lock, memory_order_release);
}

void vm_hook_set(sw_vm *vm, int count)
{
    lua_sethook(vm->L, count ? vm_hook : NULL, count ? LUA_MASKCOUNT : 0, count);
    vm->armed = count != 0;
}

void vm_hook_arm(sw_vm *vm, int count)
{
    if (vm_counting(vm)) {
        vm_hook_set(vm, count);
        return;
    }
    hook_lock(vm);
    vm_hook_set(vm, count);
    hook_unlock(vm);
}

/* Raises the kill (or memory) error and arms the hook to fire at every instruction: any
 * pcall, xpcall handler or coroutine.resume that catches it raises again at its next
 * instruction, so the error always reaches the main coroutine. */
void vm_die(sw_vm *vm, lua_State *L)
{
    vm_hook_arm(vm, 1);
    lua_pushstring(L, vm->oom ? vm_oom_text(vm) : "killed");
    lua_error(L);
}

void vm_gc_request(sw_vm *vm)
{
    vm->gc_wanted = 1;
    vm_hook_arm(vm, 1);
}

/* LuaJIT has no emergency collection: without this, a process holding half its limit in
 * live data fails on garbage its collector has not reached yet. The next request comes
 * halfway between what survives and the limit. */
static void collect(sw_vm *vm, lua_State *L)
{
    vm->gc_wanted = 0;
    if (!vm->limit) return;
    vm->gc_at = SIZE_MAX; /* no new request while collecting */
    lua_gc(L, LUA_GCCOLLECT, 0);
    vm->gc_at = vm->mem < vm->limit ? vm->mem + (vm->limit - vm->mem) / 2 : vm->limit;
    if (vm->gc_at < vm->limit / 2) vm->gc_at = vm->limit / 2;
}

/* Not counting: yield only for a pending interrupt, and leave the hook as that needs (off,
 * or retrying soon where yielding is impossible). Decided under the lock, so an interrupt
 * arriving meanwhile is never lost. */
static int interrupt_due(sw_vm *vm, int yieldable)
{
    int due;
    hook_lock(vm);
    due = vm->interrupted && yieldable;
    if (due) vm->interrupted = 0;
    vm_hook_set(vm, vm->interrupted ? RETRY_COUNT : 0);
    hook_unlock(vm);
    return due;
}

/* lua_isyieldable is exactly the test lua_yield makes (the current C frame was entered by
 * lua_resume): false inside a sort comparator, gsub callback, xpcall handler or any Lua
 * called through lua_call, and on the main state. Walking frames for C functions misses the
 * xpcall handler of an error raised by a VM instruction, so it is not used. */
static void vm_hook(lua_State *L, lua_Debug *ar)
{
    sw_vm *vm = sw_vm_of(L);
    int yieldable = lua_isyieldable(L);
    (void)ar;
    if (vm_dying(vm)) vm_die(vm, L);
    if (vm->gc_wanted) {
        collect(vm, L);
        if (vm_counting(vm)) { /* armed early for the collection: restart the count */
            vm_hook_set(vm, vm->reductions);
            return;
        }
    }
    if (vm_counting(vm) ? !yieldable : !interrupt_due(vm, yieldable))
        return; /* a count hook simply tries again at its next count */
    vm->why = WHY_PREEMPT;
    lua_yield(L, 0); /* a hook may only yield zero values */
}

/* Not counting: makes a running vm's hook fire at its next instruction. */
static void poke(sw_vm *vm, int interrupt)
{
    if (vm_counting(vm) || vm->jit)
        return; /* a count hook comes anyway; a JIT state's is never set from outside */
    hook_lock(vm);
    if (vm->running) {
        vm->interrupted |= interrupt;
        if (!vm->armed) vm_hook_set(vm, 1);
    }
    hook_unlock(vm);
}

void sw_vm_interrupt(sw_vm *vm) { poke(vm, 1); }

void sw_vm_kill(sw_vm *vm)
{
    atomic_store(&vm->killed, 1);
    poke(vm, 0);
}

/* Lua code that a C function calls back (a gsub callback that calls gsub, a __tostring
 * that prints) recurses on the C stack, where LuaJIT has no limit: raw LuaJIT segfaults on
 * `local function f(c) return (c:gsub(".", f)) end f("ab")`. Every sandbox function that
 * calls back checks how much of the slice's C stack is used. */
void vm_cstack_check(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    char here;
    uintptr_t at = (uintptr_t)&here, base = vm->cstack_base;
    if (base && (base > at ? base - at : at - base) > CSTACK_LIMIT)
        luaL_error(L, "C stack overflow");
}

/* Brackets one lua_resume of the main coroutine: interrupts only land while it runs, and a
 * stale one is cleared at the end so the next slice starts fresh. */
int vm_run_slice(sw_vm *vm, int nargs)
{
    int on_demand = !vm_counting(vm), rc;
    char base;
    vm->cstack_base = (uintptr_t)&base;
    if (on_demand) {
        hook_lock(vm);
        vm->running = 1;
        vm->interrupted = 0;
        hook_unlock(vm);
    }
    rc = lua_resume(vm->co, nargs);
    if (on_demand) {
        hook_lock(vm);
        vm->running = vm->interrupted = 0;
        if (vm->armed) vm_hook_set(vm, 0);
        hook_unlock(vm);
    }
    vm->cstack_base = 0;
    return rc;
}

/* ---- for the pattern matcher (vm_pattern.h) ---- */

void sw_vm_poll_kill(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    if (vm_dying(vm)) vm_die(vm, L);
}

void sw_vm_cstack_check(lua_State *L) { vm_cstack_check(L); }
