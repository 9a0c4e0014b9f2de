/* One Lua process: a LuaJIT state made with our allocator (byte count, limit), an
 * allow-list sandbox, a main coroutine run in slices (count hook or interrupt), blocking
 * host calls passed through user coroutines, kill, and error description.
 * Builds on the Lua 5.1 C API plus LuaJIT's lua_isyieldable and luaJIT_setmode; the
 * string pattern functions are replaced by the bounded matcher in the last section. */
#ifndef _GNU_SOURCE /* the build defines it; memmem gives a linear-time plain string.find */
#define _GNU_SOURCE
#endif
#include "vm.h"
#include "vm_heap.h"
#include "vm_pattern.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <threads.h>

#include <lauxlib.h>
#include <lualib.h>
#include <luajit.h>

/* Why the last yield happened: set just before a host-caused yield, read and cleared by
 * the resumer in C right after lua_resume returns, so no Lua code can run in between. */
enum { WHY_USER, WHY_PREEMPT, WHY_BLOCK };
enum { PHASE_NEW, PHASE_LIVE, PHASE_OVER };

#define RETRY_COUNT 1000 /* reductions = 0: instructions before retrying a refused yield */
#define MAX_NESTING 200  /* coroutine.resume depth (C stack), as LUAI_MAXCCALLS */
#define N_BUILTIN_LAZY 4
#define CSTACK_LIMIT ((uintptr_t)1 << 20) /* C stack a slice may use below its resume */

struct sw_vm {
    lua_State *L;  /* main state: host registrations, anchors; never runs process code */
    lua_State *co; /* the process's main coroutine */
    void *owner;
    size_t mem, limit;
    size_t gc_at;  /* with a limit: past this many bytes, ask the hook for a full collection */
    int gc_wanted; /* the allocator asked; the hook collects at the next instruction */
    int reductions, jit;
    int phase, why, oom, nesting;
    uintptr_t cstack_base; /* address near the bottom of the running slice's C stack */
    sw_vm_status final, last; /* final: once over; last: the latest resumable status */
    atomic_int killed;
    atomic_flag hook_lock; /* serialises lua_sethook between this vm's thread and interrupters */
    int running, armed, interrupted; /* not counting: guarded by hook_lock */
    uint64_t opened;       /* lazy globals already opened: builtins, then host libs */
    const sw_vm_lib *libs;
    char *errmsg;
    sw_heap heap;  /* the state's small objects; large ones come from malloc */
    sw_vm_budget *budget; /* the host's (vm.h), or NULL */
    size_t taken;         /* bytes taken from it (SIZE_MAX without one: never more to take) */
    size_t give_below;    /* below this many bytes held, give a step back (0 without one) */
    int budget_strict;    /* passing its cap fails the allocation (from creation to the end) */
    int lifted;           /* limit_lift: host-side work, where no allocation may fail */
};

static void vm_hook(lua_State *L, lua_Debug *ar);
static void gc_request(sw_vm *vm);

/* ---- allocator ------------------------------------------------------------------------ */

/* The state is about to hold `want` bytes, more than it has taken from the host's budget:
 * take the steps it lacks. 0 when the cap refuses them (the allocation then fails). Kept out
 * of line, as budget_shrink: inlined, they made every vm_alloc save more registers. */
__attribute__((noinline, cold)) static int budget_grow(sw_vm *vm, size_t want)
{
    size_t to = (want + SW_VM_BUDGET_STEP - 1) / SW_VM_BUDGET_STEP * SW_VM_BUDGET_STEP;
    if (!sw_vm_budget_take(vm->budget, to - vm->taken, !vm->budget_strict || vm->lifted))
        return 0;
    vm->taken = to;
    vm->give_below = to > 2 * SW_VM_BUDGET_STEP ? to - 2 * SW_VM_BUDGET_STEP : 0;
    return 1;
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
            if (vm->mem < vm->give_below)
                budget_shrink(vm);
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
    if (!p)
        return NULL;
    vm->mem = vm->mem - old + nsize;
    if (vm->limit && vm->mem > vm->gc_at && !vm->gc_wanted)
        gc_request(vm);
    return p;
}

sw_vm *sw_vm_of(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

void *sw_vm_owner(lua_State *L) { return sw_vm_of(L)->owner; }

/* Host-side stack work (moving values, describing errors) happens outside any protected
 * call, where an allocation failure would make LuaJIT panic: lift the limit meanwhile. */
static size_t limit_lift(sw_vm *vm)
{
    size_t lim = vm->limit;
    vm->limit = 0;
    vm->lifted = 1;
    return lim;
}

static void limit_restore(sw_vm *vm, size_t lim)
{
    vm->limit = lim;
    vm->lifted = 0;
}

/* What a failed allocation means: over the state's own limit, or over the host's budget. */
static const char *oom_text(const sw_vm *vm)
{
    return vm->oom == 2 ? "host memory limit reached" : "memory limit exceeded";
}

/* ---- hook: preemption, kill, collection ------------------------------------------------
 * Counting (reductions > 0, no JIT): a count hook fires every `reductions` instructions and
 * only this vm's thread sets hooks. Otherwise the hook is armed on demand, to fire at the
 * next instruction: by sw_vm_interrupt or sw_vm_kill from other threads, or by the allocator;
 * hook_lock serialises all those lua_sethook calls. */

static int counting(const sw_vm *vm) { return vm->reductions > 0 && !vm->jit; }

static void hook_lock(sw_vm *vm)
{
    while (atomic_flag_test_and_set_explicit(&vm->hook_lock, memory_order_acquire))
        ;
}

static void hook_unlock(sw_vm *vm)
{
    atomic_flag_clear_explicit(&vm->hook_lock, memory_order_release);
}

/* Fire after `count` instructions (0: never). Caller holds hook_lock unless counting. */
static void hook_set(sw_vm *vm, int count)
{
    lua_sethook(vm->L, count ? vm_hook : NULL, count ? LUA_MASKCOUNT : 0, count);
    vm->armed = count != 0;
}

static void hook_arm(sw_vm *vm, int count)
{
    if (counting(vm)) {
        hook_set(vm, count);
        return;
    }
    hook_lock(vm);
    hook_set(vm, count);
    hook_unlock(vm);
}

static int dying(sw_vm *vm)
{
    return vm->oom || atomic_load_explicit(&vm->killed, memory_order_relaxed);
}

/* Raises the kill (or memory) error and arms the hook to fire at every instruction: any
 * pcall, xpcall handler or coroutine.resume that catches it raises again at its next
 * instruction, so the error always reaches the main coroutine. */
static void die(sw_vm *vm, lua_State *L)
{
    hook_arm(vm, 1);
    lua_pushstring(L, vm->oom ? oom_text(vm) : "killed");
    lua_error(L);
}

static void gc_request(sw_vm *vm)
{
    vm->gc_wanted = 1;
    hook_arm(vm, 1);
}

/* LuaJIT has no emergency collection: without this, a process holding half its limit in
 * live data fails on garbage its collector has not reached yet. The next request comes
 * halfway between what survives and the limit. */
static void collect(sw_vm *vm, lua_State *L)
{
    vm->gc_wanted = 0;
    if (!vm->limit)
        return;
    vm->gc_at = SIZE_MAX; /* no new request while collecting */
    lua_gc(L, LUA_GCCOLLECT, 0);
    vm->gc_at = vm->mem < vm->limit ? vm->mem + (vm->limit - vm->mem) / 2 : vm->limit;
    if (vm->gc_at < vm->limit / 2)
        vm->gc_at = vm->limit / 2;
}

/* Not counting: yield only for a pending interrupt, and leave the hook as that needs (off,
 * or retrying soon where yielding is impossible). Decided under the lock, so an interrupt
 * arriving meanwhile is never lost. */
static int interrupt_due(sw_vm *vm, int yieldable)
{
    int due;
    hook_lock(vm);
    due = vm->interrupted && yieldable;
    if (due)
        vm->interrupted = 0;
    hook_set(vm, vm->interrupted ? RETRY_COUNT : 0);
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
    if (dying(vm))
        die(vm, L);
    if (vm->gc_wanted) {
        collect(vm, L);
        if (counting(vm)) { /* armed early for the collection: restart the count */
            hook_set(vm, vm->reductions);
            return;
        }
    }
    if (counting(vm) ? !yieldable : !interrupt_due(vm, yieldable))
        return; /* a count hook simply tries again at its next count */
    vm->why = WHY_PREEMPT;
    lua_yield(L, 0); /* a hook may only yield zero values */
}

/* Not counting: makes a running vm's hook fire at its next instruction. */
static void poke(sw_vm *vm, int interrupt)
{
    if (counting(vm) || vm->jit)
        return; /* a count hook comes anyway; a JIT state's is never set from outside */
    hook_lock(vm);
    if (vm->running) {
        vm->interrupted |= interrupt;
        if (!vm->armed)
            hook_set(vm, 1);
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
static void cstack_check(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    char here;
    uintptr_t at = (uintptr_t)&here, base = vm->cstack_base;
    if (base && (base > at ? base - at : at - base) > CSTACK_LIMIT)
        luaL_error(L, "C stack overflow");
}

/* Brackets one lua_resume of the main coroutine: interrupts only land while it runs, and a
 * stale one is cleared at the end so the next slice starts fresh. */
static int run_slice(sw_vm *vm, int nargs)
{
    int on_demand = !counting(vm), rc;
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
        if (vm->armed)
            hook_set(vm, 0);
        hook_unlock(vm);
    }
    vm->cstack_base = 0;
    return rc;
}

/* ---- coroutines: host yields pass through user coroutines ----------------------------- */

/* Why a coroutine cannot be resumed, with LuaJIT's own messages, or NULL. */
static const char *resume_refusal(lua_State *L, lua_State *co)
{
    lua_Debug ar;
    int st = lua_status(co);
    if (st == LUA_YIELD)
        return NULL;
    if (st != 0)
        return "cannot resume dead coroutine";
    if (co == L || lua_getstack(co, 0, &ar))
        return "cannot resume running coroutine"; /* running, or resuming another */
    return lua_gettop(co) == 0 ? "cannot resume dead coroutine" : NULL;
}

static int step_refused(lua_State *L, const char *msg)
{
    lua_pushinteger(L, WHY_USER);
    lua_pushboolean(L, 0);
    lua_pushstring(L, msg);
    return 3;
}

/* step(co, ...) -> why, ...: resumes co like coroutine.resume and returns why it stopped
 * first, read in C right after lua_resume. WHY_USER: then ok, values as coroutine.resume.
 * Otherwise the values a host yield handed over (none for a preemption). */
static int co_step(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    lua_State *co = lua_tothread(L, 1);
    int nargs = lua_gettop(L) - 1, rc, why, n, room;
    const char *refusal = co ? resume_refusal(L, co) : "coroutine expected";
    size_t lim;
    cstack_check(L);
    if (refusal)
        return step_refused(L, refusal);
    if (vm->nesting >= MAX_NESTING)
        return step_refused(L, "C stack overflow");
    lim = limit_lift(vm); /* growing co's stack may not raise: co is not running */
    room = lua_checkstack(co, nargs);
    limit_restore(vm, lim);
    if (!room)
        return step_refused(L, "too many arguments to resume");
    lua_xmove(L, co, nargs);
    vm->nesting++;
    rc = lua_resume(co, nargs);
    vm->nesting--;
    why = vm->why;
    vm->why = WHY_USER;
    if (dying(vm))
        die(vm, L);
    if (rc != 0 && rc != LUA_YIELD) {
        lua_pushinteger(L, WHY_USER);
        lua_pushboolean(L, 0);
        lua_xmove(co, L, 1);
        return 3;
    }
    n = lua_gettop(co);
    if (!lua_checkstack(L, n + 2)) {
        lua_settop(co, 0);
        return step_refused(L, "too many results to resume");
    }
    lua_pushinteger(L, why);
    if (why == WHY_USER)
        lua_pushboolean(L, 1);
    lua_xmove(co, L, n);
    return n + 1 + (why == WHY_USER);
}

/* pass(why, ...): yields the current coroutine outward with the same meaning as the inner
 * host yield; its results (what the scheduler resumes with) go back into the inner one.
 * If this coroutine cannot yield (its resumer runs inside a C callback), a preemption is
 * dropped (the inner coroutine just continues) and a block is an error. */
static int co_pass(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    int why = (int)lua_tointeger(L, 1);
    if (!lua_isyieldable(L)) {
        if (why == WHY_BLOCK)
            return luaL_error(L, "cannot block: a resumer of this coroutine is inside a C "
                                 "call (sort comparator, gsub callback, error handler)");
        return 0;
    }
    vm->why = why;
    return lua_yield(L, lua_gettop(L) - 1);
}

/* The sandbox's coroutine.resume and coroutine.wrap. Lua, because only Lua frames can yield
 * and later continue; the flag itself is read by step in C. A preemption or block of the
 * inner coroutine makes settle yield outward (pass) and step in again when resumed. */
static const char wrap_src[] =
    "local step, pass, create, type, error = ...\n"
    "local function settle(co, why, ...)\n"
    "  if why == 0 then return ... end\n"
    "  return settle(co, step(co, pass(why, ...)))\n"
    "end\n"
    "local function resume(co, ...)\n"
    "  if type(co) ~= 'thread' then\n"
    "    error(\"bad argument #1 to 'resume' (coroutine expected)\", 2)\n"
    "  end\n"
    "  return settle(co, step(co, ...))\n"
    "end\n"
    "local function unwrap(ok, ...)\n"
    "  if ok then return ... end\n"
    "  local e = ...\n"
    "  error(e, type(e) == 'string' and 2 or 0)\n"
    "end\n"
    "local function wrap(f)\n"
    "  if type(f) ~= 'function' then\n"
    "    error(\"bad argument #1 to 'wrap' (function expected, got \" .. type(f) .. ')', 2)\n"
    "  end\n"
    "  local co = create(f)\n"
    "  return function(...) return unwrap(settle(co, step(co, ...))) end\n"
    "end\n"
    "return resume, wrap\n";

/* The sandbox's xpcall: the handler goes through guard (see guarded_handler). */
static const char xpcall_src[] =
    "local xpcall, guard, type, error = ...\n"
    "return function(f, h, ...)\n"
    "  if type(h) ~= 'function' then\n"
    "    error(\"bad argument #2 to 'xpcall' (function expected, got \" .. type(h) .. ')', 2)\n"
    "  end\n"
    "  return xpcall(f, guard(h), ...)\n"
    "end\n";

/* Allow-lists, each sorted for listed(). */
static const char *const base_allowed[] = {
    "_G", "_VERSION", "assert", "error", "getmetatable", "ipairs", "next", "pairs",
    "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable", "string", "tonumber",
    "tostring", "type", "unpack", "xpcall", NULL}; /* xpcall is then wrapped */
static const char *const string_allowed[] = {
    "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower", "match", "rep",
    "reverse", "sub", "upper", NULL};
static const char *const table_allowed[] = {
    "concat", "foreach", "foreachi", "getn", "insert", "maxn", "move", "remove", "sort", NULL};
static const char *const math_allowed[] = {
    "abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor",
    "fmod", "frexp", "huge", "ldexp", "log", "log10", "max", "min", "modf", "pi", "pow",
    "rad", "random", "randomseed", "sin", "sinh", "sqrt", "tan", "tanh", NULL};
static const char *const bit_allowed[] = {
    "arshift", "band", "bnot", "bor", "bswap", "bxor", "lshift", "rol", "ror", "rshift",
    "tobit", "tohex", NULL};
static const char *const coroutine_allowed[] = {
    "create", "isyieldable", "resume", "running", "status", "wrap", "yield", NULL};

/* names is sorted (strcmp order) and NULL-terminated. */
static int listed(const char *const *names, const char *s)
{
    size_t lo = 0, hi = 0;
    while (names[hi])
        hi++;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s, names[mid]);
        if (c == 0)
            return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* Once per program (immutable afterwards, shared by all vms, freed never):
 * - the wrapper chunks' bytecode: parsing costs ~14 us per process, loading under 1 us;
 * - the names luaopen_base and luaopen_string add beyond the allow-lists: each process then
 *   clears just those instead of walking its tables (a quarter of sw_vm_new's time).
 * If preparing fails (no memory), every process falls back to the slow paths. */
#define MAX_REMOVALS 64
typedef struct removals {
    int n; /* -1: unknown, walk the table */
    char *names[MAX_REMOVALS];
} removals;
typedef struct chunk {
    const char *src, *name;
    size_t len;
    char *code; /* bytecode, or NULL: load src */
    size_t code_len;
} chunk;
static chunk wrap_chunk = {wrap_src, "=[coroutine]", sizeof wrap_src - 1, NULL, 0};
static chunk xpcall_chunk = {xpcall_src, "=[xpcall]", sizeof xpcall_src - 1, NULL, 0};
static removals base_removals = {-1, {0}}, string_removals = {-1, {0}};
static once_flag prepared = ONCE_FLAG_INIT;

static void *plain_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

/* Bytecode without debug info (string.dump's strip): ~300 bytes less per process and
 * chunk. The wrappers raise their errors at their caller's level, so no position is lost. */
static void compile(lua_State *L, chunk *c)
{
    size_t len;
    const char *code;
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "dump");
    if (luaL_loadbuffer(L, c->src, c->len, c->name) != 0)
        lua_error(L);
    lua_pushboolean(L, 1);
    lua_call(L, 2, 1);
    code = lua_tolstring(L, -1, &len);
    if (code && (c->code = malloc(len)) != NULL) {
        memcpy(c->code, code, len);
        c->code_len = len;
    }
    lua_pop(L, 2);
}

static void find_removals(lua_State *L, int idx, const char *const *allowed, removals *out)
{
    int n = 0, ok = 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || n == MAX_REMOVALS)
            ok = 0;
        else if (!listed(allowed, lua_tostring(L, -1)) &&
                 !(out->names[n++] = strdup(lua_tostring(L, -1))))
            ok = 0;
    }
    out->n = ok ? n : -1;
}

static int prepare_in(lua_State *L)
{
    lua_pushcfunction(L, luaopen_base);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_string);
    lua_call(L, 0, 1);
    find_removals(L, lua_gettop(L), string_allowed, &string_removals);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    find_removals(L, lua_gettop(L), base_allowed, &base_removals);
    compile(L, &wrap_chunk);
    compile(L, &xpcall_chunk);
    return 0;
}

static void prepare(void)
{
    lua_State *L;
    sw_pattern_prepare();
    L = lua_newstate(plain_alloc, NULL);
    if (L && lua_cpcall(L, prepare_in, NULL) != 0)
        base_removals.n = string_removals.n = -1;
    if (L)
        lua_close(L);
}

/* Pushes the chunk's function; raises only when out of memory (the source is fixed). */
static void load_chunk(lua_State *L, const chunk *c)
{
    if (c->code)
        luaL_loadbuffer(L, c->code, c->code_len, c->name);
    else
        luaL_loadbuffer(L, c->src, c->len, c->name);
    if (!lua_isfunction(L, -1))
        lua_error(L);
}

/* ---- sandbox -------------------------------------------------------------------------- */

/* Removes every key of the table at idx that is not in names (an allow-list, so functions
 * a future LuaJIT adds stay out until someone reviews them). Walks the table. */
static void keep_only(lua_State *L, int idx, const char *const *names)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || !listed(names, lua_tostring(L, -1))) {
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, idx); /* clearing a field during traversal is allowed */
        }
    }
}

/* keep_only, with the names to remove known in advance when they are. */
static void keep_allowed(lua_State *L, int idx, const char *const *names, const removals *r)
{
    int i;
    if (r->n < 0) {
        keep_only(L, idx, names);
        return;
    }
    for (i = 0; i < r->n; i++) {
        lua_pushnil(L);
        lua_setfield(L, idx, r->names[i]);
    }
}

static int load_refused(lua_State *L, int msg_idx)
{
    lua_pushnil(L);
    lua_pushvalue(L, msg_idx < 0 ? msg_idx - 1 : msg_idx);
    return 2;
}

/* Calls the reader at index 1 until it returns nil or "", and pushes the pieces joined; or
 * returns non-0 with an error message on top. Each call runs under lua_pcall, which restores
 * the hook state: LuaJIT's own load calls the reader in an internal protected call that does
 * not, so a kill raised by the hook inside a reader left every hook off for good. */
static int read_chunk(lua_State *L)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 0, 1, 0) != 0) {
            if (dying(sw_vm_of(L)))
                lua_error(L); /* a kill is not the reader's error to report */
            return 1;
        }
        if (lua_isnil(L, -1) || (lua_isstring(L, -1) && lua_objlen(L, -1) == 0)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) {
            lua_pushliteral(L, "reader function must return a string");
            return 1;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 0;
}

/* load(chunk [, chunkname [, mode [, env]]]) and loadstring: text only, whatever mode says
 * (a binary chunk would let the process forge bytecode). */
static int sb_load(lua_State *L)
{
    size_t len;
    const char *s, *name;
    lua_settop(L, 4);
    cstack_check(L);
    if (lua_type(L, 1) == LUA_TFUNCTION) {
        if (read_chunk(L) != 0)
            return load_refused(L, -1);
        s = lua_tolstring(L, -1, &len);
        name = luaL_optstring(L, 2, "=(load)");
    } else {
        s = luaL_checklstring(L, 1, &len);
        name = luaL_optstring(L, 2, s);
    }
    if (len > 0 && s[0] == '\033') {
        lua_pushliteral(L, "attempt to load a binary chunk (binary chunks are not allowed)");
        return load_refused(L, -1);
    }
    if (luaL_loadbufferx(L, s, len, name, "t") != 0)
        return load_refused(L, -1);
    if (lua_istable(L, 4)) {
        lua_pushvalue(L, 4);
        lua_setfenv(L, -2);
    }
    return 1;
}

/* xpcall's handler runs before the stack unwinds, and after an error the hook raised (a
 * kill) LuaJIT runs it with every hook still off: a looping handler could never be stopped.
 * So the sandbox's xpcall hands the raw one this guard instead of the handler; once the
 * process is dying it returns the error untouched without running the handler. */
static int guarded_handler(lua_State *L)
{
    if (dying(sw_vm_of(L)))
        return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int guard_handler(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushcclosure(L, guarded_handler, 1);
    return 1;
}

/* Replaces the global xpcall by the guarded one. */
static void sandbox_xpcall(lua_State *L)
{
    load_chunk(L, &xpcall_chunk);
    lua_getglobal(L, "xpcall");
    lua_pushcfunction(L, guard_handler);
    lua_getglobal(L, "type");
    lua_getglobal(L, "error");
    lua_call(L, 4, 1);
    lua_setglobal(L, "xpcall");
}

static int sb_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "count") != 0)
        return luaL_error(L, "collectgarbage('%s') is not allowed (only 'count')", opt);
    lua_pushnumber(L, lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
    return 1;
}

/* print: tab-separated tostring of the arguments, written as one line with one fwrite so
 * lines of processes on different threads never interleave. */
static int sb_print(lua_State *L)
{
    int n = lua_gettop(L), i;
    size_t len;
    const char *line;
    luaL_Buffer b;
    cstack_check(L);
    lua_getglobal(L, "tostring");
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        lua_pushvalue(L, n + 1);
        lua_pushvalue(L, i);
        lua_call(L, 1, 1);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "'tostring' must return a string to 'print'");
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    line = lua_tolstring(L, -1, &len);
    /* One write per line, unbuffered: a long-running host's output appears as it happens, and
     * lines from processes on different threads never interleave (each is one call). */
    while (len > 0) {
        ssize_t w = write(1, line, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        line += w;
        len -= (size_t)w;
    }
    return 0;
}


static const luaL_Reg string_safe[] = {
    {"find", sw_pattern_find}, {"match", sw_pattern_match}, {"gmatch", sw_pattern_gmatch}, {"gsub", sw_pattern_gsub},
    {NULL, NULL}};

/* string: allow-list, bounded pattern functions, and a protected metatable (getmetatable("")
 * returns false). The metatable's __index stays the process's own string table, as in Lua:
 * a process that overwrites string.upper breaks ("a"):upper() for itself only. */
static void sandbox_string(lua_State *L)
{
    lua_getglobal(L, "string");
    keep_allowed(L, lua_gettop(L), string_allowed, &string_removals);
    luaL_register(L, NULL, string_safe);
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
}

static void sandbox_base(lua_State *L)
{
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    keep_allowed(L, lua_gettop(L), base_allowed, &base_removals);
    lua_pop(L, 1);
}

static int open_lib(lua_State *L, lua_CFunction open, const char *const *allowed)
{
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    keep_only(L, lua_gettop(L), allowed);
    return 1;
}

/* table.sort with the C stack check (its comparator may sort again). */
static int sb_sort(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cstack_check(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

static int open_table(lua_State *L)
{
    open_lib(L, luaopen_table, table_allowed);
    lua_getfield(L, -1, "sort");
    lua_pushcclosure(L, sb_sort, 1);
    lua_setfield(L, -2, "sort");
    return 1;
}
static int open_math(lua_State *L) { return open_lib(L, luaopen_math, math_allowed); }
static int open_bit(lua_State *L) { return open_lib(L, luaopen_bit, bit_allowed); }

/* coroutine.running: nil in a root coroutine (the main function, or a host task run by
 * sw_vm_run), as for the main thread in Lua 5.1. So process code never holds a coroutine the
 * scheduler resumes, and cannot resume one behind the scheduler's back. */
static int co_running(lua_State *L)
{
    if (L == sw_vm_of(L)->co)
        lua_pushnil(L);
    else
        lua_pushthread(L);
    return 1;
}

static int open_coroutine(lua_State *L)
{
    int t;
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    lua_getfield(L, -1, "coroutine"); /* made by luaopen_base, hidden from _G until now */
    t = lua_gettop(L);
    keep_only(L, t, coroutine_allowed);
    load_chunk(L, &wrap_chunk);
    lua_pushcfunction(L, co_step);
    lua_pushcfunction(L, co_pass);
    lua_getfield(L, t, "create");
    lua_getglobal(L, "type");
    lua_getglobal(L, "error");
    lua_call(L, 5, 2);
    lua_setfield(L, t, "wrap");
    lua_setfield(L, t, "resume");
    lua_pushcfunction(L, co_running);
    lua_setfield(L, t, "running");
    return 1;
}

/* Opened on first use. */
static const sw_vm_lib builtin_lazy[N_BUILTIN_LAZY] = {
    {"table", open_table}, {"math", open_math}, {"bit", open_bit},
    {"coroutine", open_coroutine}};

/* Pushes the value of a lazy global: builtin b (or -1), then extended or made by host. */
static void lazy_open(lua_State *L, int b, const sw_vm_lib *host)
{
    if (b >= 0) {
        lua_pushcfunction(L, builtin_lazy[b].open);
        lua_call(L, 0, 1);
    } else {
        lua_pushnil(L);
    }
    if (host) {
        lua_pushcfunction(L, host->open);
        lua_insert(L, -2);
        lua_call(L, 1, 1);
    }
}

/* __index of the globals: opens a lazy global on first read (once: a global the process
 * sets to nil later stays nil). */
static int lazy_index(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    const sw_vm_lib *host = NULL;
    int b = -1, i;
    if (!k)
        return 0;
    for (i = 0; i < N_BUILTIN_LAZY; i++)
        if (!(vm->opened >> i & 1) && strcmp(builtin_lazy[i].name, k) == 0)
            b = i;
    for (i = 0; vm->libs && vm->libs[i].name && i < 32; i++)
        if (!(vm->opened >> (N_BUILTIN_LAZY + i) & 1) && strcmp(vm->libs[i].name, k) == 0)
            host = &vm->libs[i];
    if (b < 0 && !host)
        return 0;
    if (b >= 0)
        vm->opened |= (uint64_t)1 << b;
    if (host)
        vm->opened |= (uint64_t)1 << (N_BUILTIN_LAZY + (host - vm->libs));
    lazy_open(L, b, host);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_GLOBALSINDEX);
    return 1;
}

/* The globals' metatable is protected (getmetatable(_G) is false, setmetatable(_G) raises):
 * replacing it would silently drop the lazy libraries. */
static void sandbox_lazy(lua_State *L)
{
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, lazy_index);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, LUA_GLOBALSINDEX);
}

/* Removes what luaopen_jit registered: the process must not reach the jit module. */
static void jit_hide(lua_State *L)
{
    lua_pushnil(L);
    lua_setglobal(L, "jit");
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    lua_pushnil(L);
    lua_setfield(L, -2, "jit");
    lua_pushnil(L);
    lua_setfield(L, -2, "jit.opt");
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "_PRELOAD");
}

static void call_open(lua_State *L, lua_CFunction open)
{
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
}

/* Everything sw_vm_new builds, under lua_cpcall so running out of memory is an error. */
static int vm_setup(lua_State *L)
{
    sw_vm *vm = lua_touserdata(L, 1);
    call_once(&prepared, prepare);
    call_open(L, luaopen_base);
    call_open(L, luaopen_string);
    sandbox_base(L);
    sandbox_xpcall(L);
    lua_pushcfunction(L, sb_load);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "load");
    lua_setglobal(L, "loadstring");
    lua_pushcfunction(L, sb_collectgarbage);
    lua_setglobal(L, "collectgarbage");
    lua_pushcfunction(L, sb_print);
    lua_setglobal(L, "print");
    sandbox_string(L);
    sandbox_lazy(L);
    if (vm->jit) {
        call_open(L, luaopen_jit); /* CPU detection and JIT on; then hidden */
        jit_hide(L);
    } else {
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
        if (counting(vm))
            hook_set(vm, vm->reductions);
    }
    vm->co = lua_newthread(L);
    luaL_ref(L, LUA_REGISTRYINDEX);
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
    sw_vm *vm = calloc(1, sizeof *vm);
    if (!vm)
        return NULL;
    vm->owner = owner;
    vm->reductions = !lim ? SW_VM_REDUCTIONS_DEFAULT : lim->reductions > 0 ? lim->reductions : 0;
    vm->jit = lim ? lim->jit : 0;
    atomic_init(&vm->killed, 0);
    atomic_flag_clear(&vm->hook_lock);
    sw_heap_init(&vm->heap, 0);
    vm->taken = SIZE_MAX; /* no budget until sw_vm_set_budget */
    vm->L = lua_newstate(vm_alloc, vm);
    if (!vm->L || lua_cpcall(vm->L, vm_setup, vm) != 0) {
        if (vm->L)
            close_state(vm);
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
    if (!vm)
        return;
    vm->limit = 0; /* finalizers of host userdata may still allocate */
    vm->budget_strict = 0;
    close_state(vm);
    sw_heap_release(&vm->heap);
    if (vm->budget)
        sw_vm_budget_give(vm->budget, vm->taken);
    free(vm->errmsg);
    free(vm);
}

lua_State *sw_vm_lua(sw_vm *vm) { return vm->L; }
lua_State *sw_vm_thread(sw_vm *vm) { return vm->co; }
size_t sw_vm_memory(const sw_vm *vm) { return vm->mem; }
const char *sw_vm_error(sw_vm *vm) { return vm->errmsg; }
const char *sw_vm_oom_error(const sw_vm *vm) { return vm->oom ? oom_text(vm) : NULL; }
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
    hook_arm(vm, 0);
    if (st == SW_VM_KILLED)
        set_error(vm, "killed");
    return st;
}

/* The text of the error value at the top of the main coroutine, with its traceback, without
 * ever calling a metamethod (S13: a __tostring that loops must not hang the host). */
static int describe(lua_State *L)
{
    sw_vm *vm = lua_touserdata(L, 1);
    char head[64];
    const char *msg = head;
    if (lua_gettop(vm->co) == 0)
        lua_pushliteral(vm->co, "unknown error");
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
            if (lua_type(L, -1) == LUA_TSTRING)
                msg = lua_tostring(L, -1);
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
    if (atomic_load(&vm->killed))
        return finish(vm, SW_VM_KILLED);
    if (vm->oom)
        return fail(vm, oom_text(vm));
    if (rc == LUA_YIELD && why == WHY_PREEMPT)
        return vm->last = SW_VM_PREEMPTED;
    if (rc == LUA_YIELD && why == WHY_BLOCK)
        return vm->last = SW_VM_BLOCKED;
    if (rc == LUA_YIELD)
        return fail(vm, "attempt to yield from outside a coroutine");
    if (rc == 0)
        return finish(vm, SW_VM_DONE);
    return fail(vm, NULL);
}

int sw_vm_load(sw_vm *vm, const char *chunkname, const char *src, size_t len,
               char *err, size_t errlen)
{
    int rc;
    const char *msg;
    if (len > 0 && src[0] == '\033') {
        snprintf(err, errlen, "%s: binary chunks are not allowed", chunkname);
        return -1;
    }
    rc = luaL_loadbufferx(vm->L, src, len, chunkname, "t");
    if (rc == 0)
        return 0;
    msg = vm->oom || rc == LUA_ERRMEM ? oom_text(vm) : lua_tostring(vm->L, -1);
    snprintf(err, errlen, "%s", msg ? msg : "cannot load chunk");
    lua_pop(vm->L, 1);
    return -1;
}

sw_vm_status sw_vm_start(sw_vm *vm, int nargs)
{
    lua_State *L = vm->L;
    size_t lim;
    if (vm->phase != PHASE_NEW)
        return SW_VM_FAILED;
    vm->phase = PHASE_LIVE;
    if (nargs < 0 || lua_gettop(L) < nargs + 1 || !lua_isfunction(L, -(nargs + 1)))
        return fail(vm, "sw_vm_start: no function to run");
    if (atomic_load(&vm->killed)) {
        lua_pop(L, nargs + 1);
        return finish(vm, SW_VM_KILLED);
    }
    lim = limit_lift(vm);
    if (!lua_checkstack(vm->co, nargs + 1)) {
        limit_restore(vm, lim);
        return fail(vm, "sw_vm_start: too many arguments");
    }
    lua_xmove(L, vm->co, nargs + 1);
    limit_restore(vm, lim);
    return after_slice(vm, run_slice(vm, nargs));
}

/* Leaves only the top n values on the main coroutine (the resume values). */
static void keep_top(sw_vm *vm, int n)
{
    lua_State *co = vm->co;
    size_t lim;
    if (lua_gettop(co) == n)
        return;
    lim = limit_lift(vm);
    lua_checkstack(vm->L, n);
    lua_xmove(co, vm->L, n);
    lua_settop(co, 0);
    lua_xmove(vm->L, co, n);
    limit_restore(vm, lim);
}

int sw_vm_reserve(sw_vm *vm, lua_State *co, int n)
{
    size_t lim = limit_lift(vm);
    int ok = lua_checkstack(co, n);
    limit_restore(vm, lim);
    return ok;
}

sw_vm_status sw_vm_resume(sw_vm *vm, int nvalues)
{
    if (vm->phase == PHASE_OVER)
        return vm->final;
    if (vm->phase == PHASE_NEW)
        return SW_VM_FAILED;
    if (atomic_load(&vm->killed))
        return finish(vm, SW_VM_KILLED);
    if (vm->last == SW_VM_PREEMPTED || nvalues < 0)
        nvalues = 0; /* a hook yield must be resumed with nothing */
    if (nvalues > lua_gettop(vm->co))
        nvalues = lua_gettop(vm->co);
    keep_top(vm, nvalues);
    return after_slice(vm, run_slice(vm, nvalues));
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
    if (rc != 0 || atomic_load(&vm->killed) || vm->oom)
        return after_slice(vm, rc);
    vm->why = WHY_USER;
    return SW_VM_DONE; /* one task returned; the process goes on */
}

sw_vm_status sw_vm_run(sw_vm *vm, lua_State *co, int nargs)
{
    if (vm->phase == PHASE_OVER)
        return vm->final;
    vm->phase = PHASE_LIVE;
    if (atomic_load(&vm->killed))
        return finish(vm, SW_VM_KILLED);
    lua_State *saved = vm->co;
    vm->co = co;
    if (lua_status(co) == LUA_YIELD) {
        if (nargs > lua_gettop(co))
            nargs = lua_gettop(co);
        keep_top(vm, nargs);
    }
    sw_vm_status st = task_after_slice(vm, run_slice(vm, nargs));
    vm->co = saved;
    return st;
}

void sw_vm_finish(sw_vm *vm)
{
    if (vm->phase != PHASE_OVER)
        finish(vm, SW_VM_DONE);
}

/* ---- compiled code: parse once per entry, load bytecode per process ---------------------- */

typedef struct bc_buf {
    unsigned char *data;
    size_t len, cap;
} bc_buf;

static int bc_append(lua_State *L, const void *p, size_t sz, void *ud)
{
    bc_buf *b = ud;
    (void)L;
    if (b->len + sz > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + sz)
            cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d)
            return 1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, sz);
    b->len += sz;
    return 0;
}

int sw_vm_compile(const char *chunkname, const char *src, size_t len, unsigned char **out, size_t *out_len,
                  char *err, size_t errlen)
{
    lua_State *L = luaL_newstate();
    bc_buf b = {0};
    int rc = -1;
    if (!L) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (len > 0 && src[0] == '\033')
        snprintf(err, errlen, "%s: binary chunks are not allowed", chunkname);
    else if (luaL_loadbufferx(L, src, len, chunkname, "t") != 0)
        snprintf(err, errlen, "%s", lua_tostring(L, -1));
    else if (lua_dump(L, bc_append, &b) != 0 || !b.data)
        snprintf(err, errlen, "out of memory");
    else
        rc = 0;
    lua_close(L);
    if (rc != 0) {
        free(b.data);
        return -1;
    }
    *out = b.data;
    *out_len = b.len;
    return 0;
}

int sw_vm_load_compiled(sw_vm *vm, const char *chunkname, const unsigned char *bc, size_t len,
                        char *err, size_t errlen)
{
    int rc = luaL_loadbufferx(vm->L, (const char *)bc, len, chunkname, "b");
    if (rc == 0)
        return 0;
    const char *msg = vm->oom || rc == LUA_ERRMEM ? oom_text(vm) : lua_tostring(vm->L, -1);
    snprintf(err, errlen, "%s", msg ? msg : "cannot load chunk");
    lua_pop(vm->L, 1);
    return -1;
}

/* ---- for the pattern matcher (vm_pattern.c) ---- */

void sw_vm_poll_kill(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    if (dying(vm))
        die(vm, L);
}

void sw_vm_cstack_check(lua_State *L) { cstack_check(L); }
