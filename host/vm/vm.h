/* One Lua process: an isolated LuaJIT state with its own allocator (byte count and limit),
 * a sandboxed allow-list environment, a main coroutine run in time slices (preempted by a
 * count hook or by an interrupt from a timer), blocking host calls, and kill.
 * It knows nothing about schedulers, messages or the registry: the scheduler calls
 * sw_vm_start once, then sw_vm_resume until the status is DONE, FAILED or KILLED. */
#ifndef SW_VM_H
#define SW_VM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <lua.h>

#define SW_VM_REDUCTIONS_DEFAULT 10000

/* What process code sees (vm_sandbox.c has the exact allow-lists; docs/lua-api.md tells users):
 * - globals: assert error getmetatable ipairs next pairs pcall print rawequal rawget rawset
 *   select setmetatable tonumber tostring type unpack xpcall load loadstring collectgarbage
 *   _G _VERSION string, and lazily (opened on first read, to keep idle processes small):
 *   table math bit coroutine, plus the host's sw_vm_set_libs. The globals above open
 *   together on first need too (a read or assignment of one of their names, or a string
 *   method), which no process can tell apart from opening them at creation. The globals'
 *   metatable is protected: getmetatable(_G) is false and setmetatable(_G, t) raises.
 * - never: io os debug jit ffi package require module dofile loadfile getfenv setfenv newproxy
 *   gcinfo string.dump. load/loadstring compile text only (a binary chunk: nil and "attempt
 *   to load a binary chunk ..."); collectgarbage accepts only "count"; getmetatable("") is
 *   false; print writes each line with one write(2).
 * - string.find/match/gmatch/gsub: Lua 5.1 patterns, same results as LuaJIT's, but with a
 *   work budget (1M steps + 64 per subject byte, then "pattern too complex"; gsub also
 *   spends one step per 16 bytes of output) and the kill flag polled inside; plain find is
 *   linear (memmem).
 * - builtins with a loop the caller sizes are bounded (docs/sandbox-builtins.md):
 *   table.insert/remove raise "position out of bounds" outside 1..#t+1 (Lua 5.3); long
 *   moves in insert and table.sort poll the kill flag; rawset and table.insert on a
 *   read-only proxy (sw_vm_readonly_metatable) raise like a plain assignment.
 * - in a process with a memory limit, tostring and string.sub/upper/lower/reverse/char are
 *   plain C functions with LuaJIT's results: LuaJIT's fast functions crash the host when an
 *   allocation fails inside them. There tostring(tostring) shows "function: 0x...", and a
 *   __tostring runs as a C callback (killable, not preemptible, cannot block).
 * - coroutine.resume/wrap pass preemption and sw_vm_block through user coroutines;
 *   coroutine.running() is nil in a root coroutine (main or a task): process code never
 *   holds a coroutine the scheduler resumes. A user coroutine suspended in a host call
 *   (or preempted) inside a task waits for that task's resumer: resuming it from anywhere
 *   else returns false, "cannot resume a coroutine blocked in a host call". Resume nesting
 *   is limited to 200 levels.
 * - C callbacks that recurse (a gsub callback calling gsub, a __tostring that prints, a sort
 *   comparator that sorts) stop with "C stack overflow" after 1 MB of C stack (raw LuaJIT
 *   segfaults): worker threads need a C stack of at least 2 MB (glibc's default is 8 MB). */

typedef struct sw_vm sw_vm;

/* A memory budget shared by many states and by whatever else the host counts in it (the
 * host's cap: docs/security.md "Limits"; a service's tree: docs/supervision.md "Resources").
 * A state takes bytes from it in SW_VM_BUDGET_STEP steps as its heap grows and gives steps
 * back as it shrinks (keeping up to two spare), so its allocator touches the shared counters
 * about once per step of growth, never per allocation. A budget may have a parent (a service's
 * inside the host's): a state's steps count in both, and either cap may refuse them.
 * An allocation that would take a total past its cap fails like one over the state's own
 * limit (the process fails with that budget's `refusal`), except where the state's own limit
 * is lifted too (creation, host-side stack work, the end): there it is taken anyway, so the
 * total may pass cap by what those take. Thread-safe: relaxed atomics. */
typedef struct sw_vm_budget {
    atomic_size_t used;          /* bytes taken */
    atomic_size_t cap;           /* 0: counted, never refused; may change while states run */
    atomic_size_t peak;          /* the most `used` has been since its owner last reset it */
    struct sw_vm_budget *parent; /* charged too, or NULL; outlives this one */
    const char *refusal;         /* what a state fails with when this cap refuses (static);
                                    NULL: "host memory limit reached" */
    atomic_bool refused;         /* this cap refused a state's step (its owner clears it) */
} sw_vm_budget;

#define SW_VM_BUDGET_STEP ((size_t)16 << 10)

/* Takes n bytes from b alone (not its parents): true, or false and nothing taken when that
 * would pass the cap (force: take them anyway and return true). */
static inline bool sw_vm_budget_take(sw_vm_budget *b, size_t n, bool force)
{
    size_t was = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed);
    size_t cap = atomic_load_explicit(&b->cap, memory_order_relaxed);
    if (force || !cap || was + n <= cap) return true;
    atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
    return false;
}

/* Gives n bytes back to b and each of its parents. */
static inline void sw_vm_budget_give(sw_vm_budget *b, size_t n)
{
    for (; b; b = b->parent) atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
}

/* Takes n bytes from b and each of its parents, raising their peaks: NULL, or the budget
 * whose cap refused (nothing taken anywhere; its `refused` is set). force: as above. Called
 * once per step (vm.c), never per allocation. */
sw_vm_budget *sw_vm_budget_take_all(sw_vm_budget *b, size_t n, bool force);

/* memory: bytes the state may hold, 0 = unlimited. Every allocation counts; LuaJIT never
 *         collects when an allocation fails, so once the heap passes half the limit (then
 *         halfway between what survived and the limit) the hook runs a full collection: live
 *         data close to the limit survives garbage churn (not inside JIT traces, which see no
 *         hook). Going over fails the process with "memory limit exceeded", even if its code
 *         catches the error.
 * reductions: > 0: a count hook fires every `reductions` VM instructions and preempts the
 *         process there: deterministic, but LuaJIT then routes every instruction through its
 *         hook dispatcher, so interpreted code runs 20-50% slower. 0 (or negative): no count
 *         hook; the process runs at full speed and is preempted only when some thread calls
 *         sw_vm_interrupt (a timer); a kill arms the hook itself.
 * jit:    0: the JIT compiler is off (interpreter only), which preemption and kill need.
 *         non-0: JIT on and no hook from outside: the process is never preempted and a kill
 *         lands only at its next block, end, coroutine.resume or pattern match (compiled
 *         traces never see hooks anyway). */
typedef struct sw_vm_limits {
    size_t memory;
    int reductions;
    int jit;
} sw_vm_limits;

/* What the process did with its slice. PREEMPTED and BLOCKED are resumable; DONE, FAILED and
 * KILLED are final (resuming again returns the same status and runs nothing). */
typedef enum sw_vm_status {
    SW_VM_PREEMPTED, /* used its slice; resume with 0 values */
    SW_VM_BLOCKED,   /* a host C function called sw_vm_block; resume with its results */
    SW_VM_DONE,      /* main returned; its results are on sw_vm_thread(vm) */
    SW_VM_FAILED,    /* uncaught error or memory limit; see sw_vm_error */
    SW_VM_KILLED     /* sw_vm_kill took effect */
} sw_vm_status;

/* A global the process opens on first use (lazily, to keep idle processes small).
 * open is called as open(L, lib) with one argument: the built-in library of that name if
 * there is one (so the host may extend it, e.g. coroutine.spawn), else nil. It returns one
 * value, which becomes the global. It runs in the process (on its current coroutine). */
typedef struct sw_vm_lib {
    const char *name;
    lua_CFunction open;
} sw_vm_lib;

/* Creates a process state: sandboxed globals (above), memory limit, hook. lim may be NULL for
 * the defaults (unlimited memory, 10000 reductions, no JIT). owner is an opaque pointer
 * returned by sw_vm_owner; the vm never touches it. Costs ~63k instructions (callgrind;
 * ~60% of them lua_newstate and luaopen_base) and ~19 KB (sw_vm_memory): all but LuaJIT's
 * 6 KB global state sits in one 20 KB slot of the state's heap (vm_heap.h).
 * Returns NULL when out of memory (or if this LuaJIT cannot take a custom allocator, i.e. a
 * 64-bit build without GC64; Debian's amd64 build is GC64).
 * Thread: any; the vm is then used by one thread at a time (it may move between threads
 * between calls), except sw_vm_kill and sw_vm_interrupt which any thread may call. */
sw_vm *sw_vm_new(const sw_vm_limits *lim, void *owner);

/* From now on the state's heap counts in budget and its parents (which must outlive the
 * vm): what it holds already is taken at once, even past a cap. Call once, before the vm runs
 * anything. Thread: the vm's. */
void sw_vm_set_budget(sw_vm *vm, sw_vm_budget *budget);

/* Frees the state and everything in it (suspended coroutines, anchored values). Safe on NULL.
 * The vm must not be running, and no other thread may still call sw_vm_kill/interrupt on it
 * (reference-count the owner to guarantee that). */
void sw_vm_free(sw_vm *vm);

/* The vm of any thread (coroutine) of a process state; its owner pointer. For C functions
 * the host registers. Cannot fail for states made by sw_vm_new. */
sw_vm *sw_vm_of(lua_State *L);
void *sw_vm_owner(lua_State *L);
/* The owner pointer given to sw_vm_new: set once, so any thread may read it while the vm
 * lives. */
void *sw_vm_owner_of(const sw_vm *vm);

/* The main state, to register host modules in (its globals are the process's globals)
 * and to push the function and arguments for sw_vm_start. Owned by the vm. Call Lua code on
 * it only under lua_pcall: once a memory limit is set, any allocation may raise. */
lua_State *sw_vm_lua(sw_vm *vm);

/* Lazily opened globals, in addition to the built-in lazy ones (table, math, bit,
 * coroutine). libs is an array ended by {NULL, NULL}, not copied: it must outlive the vm
 * (a static const array). At most 32 entries. Replaces any earlier list. */
void sw_vm_set_libs(sw_vm *vm, const sw_vm_lib *libs);

/* Bytes the state currently holds (what the memory limit is checked against). */
size_t sw_vm_memory(const sw_vm *vm);

/* Compiles Lua source text (never a binary chunk) as a function whose environment is the
 * process's globals, and pushes it on the main state (sw_vm_lua(vm)).
 * chunkname follows Lua's conventions ("@path" for files, "=name" verbatim).
 * Returns 0, or -1 with a one-line message in err (errlen bytes, always terminated when
 * errlen > 0) and the stack unchanged. A compile over the memory limit fails with
 * "memory limit exceeded". Thread: the vm's. */
int sw_vm_load(sw_vm *vm, const char *chunkname, const char *src, size_t len, char *err,
               size_t errlen);

/* Starts the process: the function below the top nargs values of the main state (after
 * sw_vm_load, or any function the host pushed) is popped with its arguments and called in
 * the process's main coroutine, which runs until its first slice ends. Call once; a second
 * call returns SW_VM_FAILED without running anything (and without popping). Thread: the vm's. */
sw_vm_status sw_vm_start(sw_vm *vm, int nargs);

/* Runs the next slice. After PREEMPTED pass nvalues = 0. After BLOCKED, the top nvalues
 * values of sw_vm_thread(vm) become the results of the C function that blocked (anything
 * below them on that stack, e.g. what sw_vm_block handed over, is dropped). If a kill was
 * requested meanwhile, returns SW_VM_KILLED without running. After a final status, returns it
 * again. Thread: the vm's. */
sw_vm_status sw_vm_resume(sw_vm *vm, int nvalues);

/* The process's main coroutine (made by sw_vm_new). Its stack holds:
 *   after BLOCKED: the nresults values given to sw_vm_block (indexes 1..lua_gettop);
 *                  push the resume values on top of them;
 *   after DONE:    main's results, indexes 1..lua_gettop (all of them, LUA_MULTRET);
 *   after FAILED:  the raw error value at index -1 (a string, or whatever error() was
 *                  given, e.g. an errors.new table: read its fields with lua_rawget only).
 * Owned by the vm; anchored for the vm's life. Push resume values only after
 * sw_vm_reserve (a suspended coroutine may have no free slot, and lua_xmove never checks). */
lua_State *sw_vm_thread(sw_vm *vm);

/* Makes room for n more values on co, a suspended coroutine of this vm (sw_vm_thread, or a
 * task), before the host pushes resume values on it. The memory limit does not apply (an
 * error raised on a suspended coroutine would make LuaJIT panic); only a process-wide
 * malloc failure can still abort. Returns 1, or 0 if the stack cannot grow that far.
 * Thread: the vm's. */
int sw_vm_reserve(sw_vm *vm, lua_State *co, int n);

/* For host C functions that wait: `return sw_vm_block(L, n);` suspends the whole process
 * (through any user coroutines between it and the main one) and the current slice ends with
 * SW_VM_BLOCKED; the top n values of L are handed to the scheduler on sw_vm_thread(vm).
 * When sw_vm_resume(vm, k) runs it again, the k values become the C function's results.
 * Raises a Lua error instead when the process cannot be suspended here: L is the main state,
 * or a C call is in between (a table.sort comparator, a gsub callback, an xpcall handler
 * ...), also in a resumer further out. Register any cleanup before calling: a blocked
 * process may be killed and freed without ever running again. Thread: the vm's. */
int sw_vm_block(lua_State *L, int nresults);

/* Requests a kill. Thread-safe: any thread, any time, idempotent. A running process stops at
 * its next hook (within `reductions` instructions, or at once with reductions = 0), also
 * inside pcall, xpcall handlers, load readers, user coroutines, C callbacks such as sort
 * comparators, and pattern matching; user code cannot catch it (each catch re-raises at
 * its next instruction, and handlers are skipped). The slice then ends with SW_VM_KILLED; a
 * vm that is not running returns SW_VM_KILLED from its next start or resume.
 * A JIT process (jit != 0) has no hook: see sw_vm_limits. */
void sw_vm_kill(sw_vm *vm);

/* Asks a running process with reductions = 0 to end its slice soon: the hook is armed to fire
 * at the next VM instruction, and yields as soon as the process may (outside C callbacks).
 * Does nothing when the vm is not running, uses a count hook, or is a JIT process.
 * Thread-safe (meant for a timer thread). It writes LuaJIT's hook fields and dispatch table
 * while another thread runs the VM: the same unsynchronised write LuaJIT makes from signal
 * handlers and its timer-thread profiler, benign on x86-64 and arm64 (aligned word stores),
 * though formally a data race. */
void sw_vm_interrupt(sw_vm *vm);

/* After SW_VM_FAILED: "message\nstack traceback:\n\t..." (the message of a non-string error
 * is its rawget "message" field if that is a string, else "(error object is a T value)";
 * __tostring is never called). After SW_VM_KILLED: "killed". Otherwise NULL.
 * Owned by the vm, valid until sw_vm_free. */
const char *sw_vm_error(sw_vm *vm);

/* After an allocation failed: "memory limit exceeded" (the state's own limit) or the refusal
 * of the budget whose cap refused it ("host memory limit reached" by default); NULL if none
 * has. */
const char *sw_vm_oom_error(const sw_vm *vm);

/* Runs coroutine co of this vm (a task: created on sw_vm_lua(vm) and anchored by the host)
 * for one slice. A fresh co holds its function and nargs arguments; a co that stopped at
 * PREEMPTED is resumed with nargs = 0, one that stopped at BLOCKED with the top nargs values
 * of co as the blocking call's results. Returns as sw_vm_resume, except that DONE (co
 * returned; results on co) ends only this task. FAILED and KILLED end the whole process, as
 * does a memory-limit failure. Thread: the vm's. */
sw_vm_status sw_vm_run(sw_vm *vm, lua_State *co, int nargs);

/* Ends the process for good (no further runs; no memory limit or hook) so the host may read
 * results and build its exit report without tripping either. Idempotent. */
void sw_vm_finish(sw_vm *vm);

/* Host modules are read-only proxies: an empty table whose metatable has __index (the
 * module), a __newindex that raises, and __metatable = false. Marks the metatable at idx as
 * a proxy's, so that process code's rawset and table.insert on such a table assign through
 * __newindex (and raise) instead of writing raw: nothing can add a field to the proxy.
 * Reads cost what they cost before (one miss in the empty proxy, then __index). pairs, next
 * and rawget see the empty proxy: process code reads module fields by name.
 * Raises when out of memory. Thread: the vm's. */
void sw_vm_readonly_metatable(lua_State *L, int idx);
/* Replaces the table at the top of the stack with such a proxy of it, whose __newindex is
 * newindex (it raises the caller's message). Thread: the vm's. */
void sw_vm_readonly_proxy(lua_State *L, lua_CFunction newindex);

/* Compiles Lua source text (never a binary chunk) to bytecode in a scratch state, for the
 * host's code cache. *out is malloc'd. 0, or -1 with a message in err. Thread: any. */
int sw_vm_compile(const char *chunkname, const char *src, size_t len, unsigned char **out,
                  size_t *out_len, char *err, size_t errlen);

/* Loads bytecode made by sw_vm_compile as sw_vm_load loads text (same environment, pushed on
 * the main state). Only for the host's own compiled output: process code can never reach it,
 * and a process's load still refuses binary chunks. Thread: the vm's. */
int sw_vm_load_compiled(sw_vm *vm, const char *chunkname, const unsigned char *bc, size_t len,
                        char *err, size_t errlen);

#endif
