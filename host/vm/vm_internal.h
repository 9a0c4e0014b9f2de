/* What the files of the vm wing share, and nothing else includes: the process state itself
 * (struct sw_vm) and the calls between vm.c (the state: allocator, limit, run, outcome),
 * vm_hook.c (preemption, kill, collection, C stack), vm_sandbox.c (the globals process code
 * sees), vm_builtins.c (its own versions of some builtins), vm_coroutine.c (host yields
 * through user coroutines) and vm_chunk.c (code in).
 * Everything here runs on the vm's thread unless it says otherwise. */
#ifndef STEWARD_VM_INTERNAL_H
#define STEWARD_VM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vm.h"
#include "vm_heap.h"

/* Why the last yield happened: set just before a host-caused yield, read and cleared by
 * the resumer in C right after lua_resume returns, so no Lua code can run in between. */
enum { WHY_USER, WHY_PREEMPT, WHY_BLOCK };
enum { PHASE_NEW, PHASE_LIVE, PHASE_OVER };

#define SW_VM_LINE 64 /* a cache line: sw_vm's alignment (its field order says why) */

/* Field order: each message a process handles touches its sw_vm, cold when thousands of
 * processes take turns (the ring benchmark, README): what every slice and every allocation
 * reads comes first, in two cache lines with the heap's bump pointers (vm_heap.h), and the
 * struct is cache-line aligned (sw_vm_new). */
struct sw_vm {
    /* line 0: the allocator's and the slice's */
    lua_State *L;  /* main state: host registrations, anchors; never runs process code */
    lua_State *co; /* the process's main coroutine (the running task, see sw_vm_run) */
    size_t mem, limit;
    size_t gc_at;      /* with a limit: past this many bytes, ask the hook for a full collection */
    size_t taken;      /* bytes taken from the budget (SIZE_MAX without one: never more to take) */
    size_t give_below; /* below this many bytes held, give a step back (0 without one) */
    int gc_wanted;     /* the allocator asked; the hook collects at the next instruction */
    int oom;
    /* line 1 */
    int phase, why, reductions, jit;
    sw_vm_status final, last; /* final: once over; last: the latest resumable status */
    atomic_int killed;
    atomic_flag hook_lock; /* serialises lua_sethook between this vm's thread and interrupters */
    int running, armed, interrupted; /* not counting: guarded by hook_lock */
    int nesting;
    uintptr_t cstack_base; /* address near the bottom of the running slice's C stack */
    void *owner;           /* read by every host call the process makes (sw_vm_owner) */
    /* line 2 on: the heap's bump pointers, then its free lists */
    sw_heap heap; /* the state's small objects; large ones come from malloc */
    const sw_vm_lib *libs;
    char *errmsg;
    uint64_t opened;          /* lazy globals already opened: builtins, then host libs */
    sw_vm_budget *budget;     /* the host's or its service's (vm.h), or NULL */
    sw_vm_budget *refused_by; /* the budget whose cap refused an allocation (oom == 2) */
    int budget_strict;        /* passing its cap fails the allocation (from creation to the end) */
    int lifted;               /* vm_limit_lift: host-side work, where no allocation may fail */
};
_Static_assert(offsetof(sw_vm, phase) == SW_VM_LINE && offsetof(sw_vm, heap) == 2 * SW_VM_LINE,
               "sw_vm: the hot fields fill its first two cache lines");

/* ---- vm.c ---- */

/* Host-side stack work (moving values, describing errors) happens outside any protected
 * call, where an allocation failure would make LuaJIT panic: lift the limit meanwhile and
 * restore what vm_limit_lift returned. */
size_t vm_limit_lift(sw_vm *vm);
/* What a failed allocation means: "memory limit exceeded" (the state's own limit) or the
 * refusal of the budget that refused it ("host memory limit reached": the host's). */
const char *vm_oom_text(const sw_vm *vm);
void vm_limit_restore(sw_vm *vm, size_t lim);

/* ---- vm_hook.c ---- */

/* A count hook preempts (reductions > 0, no JIT); otherwise the hook is armed on demand. */
static inline int vm_counting(const sw_vm *vm) { return vm->reductions > 0 && !vm->jit; }
/* Fire after `count` instructions (0: never). Caller holds hook_lock unless counting. */
void vm_hook_set(sw_vm *vm, int count);
/* vm_hook_set, taking hook_lock when other threads may set the hook too. */
void vm_hook_arm(sw_vm *vm, int count);
/* The allocator passed gc_at: the hook runs a full collection at the next instruction. */
void vm_gc_request(sw_vm *vm);
/* Killed (any thread may set that), or over the memory limit. */
static inline int vm_dying(sw_vm *vm)
{
    return vm->oom || atomic_load_explicit(&vm->killed, memory_order_relaxed);
}
/* Raises "killed" or "memory limit exceeded" so that no catch can keep it. Never returns. */
void vm_die(sw_vm *vm, lua_State *L);
/* Raises "C stack overflow" when the running slice has used more than 1 MB of C stack. */
void vm_cstack_check(lua_State *L);
/* One lua_resume of vm->co with nargs values, bracketed for interrupts and the C stack
 * check. Returns lua_resume's code. */
int vm_run_slice(sw_vm *vm, int nargs);

/* ---- vm_sandbox.c ---- */

/* Builds the process's globals on the fresh main state L (under lua_cpcall: raises when out
 * of memory): only the metatables that open them on first need. Opened then: allow-listed base
 * and string, the guarded xpcall, load, print, collectgarbage, rawset (all together, at the
 * first read or assignment of one of their names or the first string method), and the lazy
 * libraries (each at its first read); tostring and the allocating string fast functions are plain C
 * (vm_builtins_alloc_safe): any process may see an allocation fail, at its own limit or at the
 * host's memory cap, and LuaJIT's fast paths would then write over a live stack slot. */
void vm_sandbox_open(lua_State *L);
/* The safe subsets of os, debug and jit (vm_compat.c), each pushing its read-only table. */
int vm_compat_os(lua_State *L);
int vm_compat_debug(lua_State *L);
int vm_compat_jit(lua_State *L);
/* Sets the globals getfenv and setfenv, limited to the process's own Lua functions. */
void vm_compat_base(lua_State *L);

/* For a JIT process: opens the jit library (CPU detection, JIT on), then hides it. */
void vm_sandbox_jit(lua_State *L);

/* ---- vm_builtins.c ---- */

/* The global rawset, which refuses read-only proxies (sw_vm_readonly_metatable). */
void vm_builtins_base(lua_State *L);
/* The global tostring and string.sub/upper/lower/reverse/char as plain C functions, whose
 * allocations may fail safely (LuaJIT's fast functions crash the host when one fails). */
void vm_builtins_alloc_safe(lua_State *L);
/* table.insert, remove and sort (bounds checks, kill polling) into the table at index t. */
void vm_builtins_table(lua_State *L, int t);

/* ---- vm_coroutine.c ---- */

/* Puts the pass-through resume and wrap, and the root-hiding running, into the (already
 * allow-listed) coroutine table at index t. Raises when out of memory. */
void vm_coroutine_bind(lua_State *L, int t);

/* ---- vm_chunk.c ---- */

/* Pushes the function of lua/<name>.lua, compiled into the binary at build time
 * (lua_chunk.h), loaded as chunkname (which a stripped chunk's errors and tracebacks show).
 * Its environment is L's globals. Raises when out of memory (or if the build's bytecode
 * does not suit this LuaJIT). */
void vm_load_shipped(lua_State *L, const char *name, const char *chunkname);

#endif
