/* Host yields (preemption, sw_vm_block) pass through user coroutines: the sandbox's
 * coroutine.resume and coroutine.wrap are Lua wrappers (lua/coroutine.lua, shipped as
 * bytecode) around three C functions here, step, pass and back; coroutine.running,
 * isyieldable and yield treat root coroutines as Lua treats its main thread. vm_sandbox.c opens the library lazily and allow-lists it first. */
#include "vm_internal.h"

#include <lauxlib.h>

#define MAX_NESTING 200 /* coroutine.resume depth (C stack), as LUAI_MAXCCALLS */

/* A user coroutine suspended by a host yield (a blocking host call or a preemption inside
 * it, passed outward) waits for what the scheduler resumes the process with: only `back`
 * may resume it. Otherwise another task holding a reference to it (a shared upvalue) could
 * resume it with forged results of time.sleep or inbox:receive while its own task stays
 * blocked. The mark is this light userdata, left on the suspended coroutine's stack (which
 * nothing else touches while it is suspended): free to test, and gone with the coroutine. */
static const char host_mark = 0;

static int host_suspended(lua_State *co)
{
    return lua_gettop(co) > 0 && lua_touserdata(co, -1) == (void *)&host_mark;
}

/* Why a coroutine cannot be resumed, with LuaJIT's own messages, or NULL. */
static const char *resume_refusal(lua_State *L, lua_State *co)
{
    lua_Debug ar;
    int st = lua_status(co);
    if (st == LUA_YIELD)
        return host_suspended(co) ? "cannot resume a coroutine blocked in a host call" : NULL;
    if (st != 0) return "cannot resume dead coroutine";
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
 * Otherwise the values a host yield handed over (none for a preemption), and co is marked
 * as waiting for the scheduler. back: the scheduler's values for a marked co (unmarked). */
static int step(lua_State *L, int back)
{
    sw_vm *vm = sw_vm_of(L);
    lua_State *co = lua_tothread(L, 1);
    int nargs = lua_gettop(L) - 1, rc, why, n, room;
    const char *refusal;
    size_t lim;
    vm_cstack_check(L);
    if (back && co && host_suspended(co)) lua_pop(co, 1);
    refusal = co ? resume_refusal(L, co) : "coroutine expected";
    if (refusal) return step_refused(L, refusal);
    if (vm->nesting >= MAX_NESTING) return step_refused(L, "C stack overflow");
    lim = vm_limit_lift(vm); /* growing co's stack may not raise: co is not running */
    room = lua_checkstack(co, nargs);
    vm_limit_restore(vm, lim);
    if (!room) return step_refused(L, "too many arguments to resume");
    lua_xmove(L, co, nargs);
    vm->nesting++;
    rc = lua_resume(co, nargs);
    vm->nesting--;
    why = vm->why;
    vm->why = WHY_USER;
    if (vm_dying(vm)) vm_die(vm, L);
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
    if (why == WHY_USER) lua_pushboolean(L, 1);
    lua_xmove(co, L, n);
    if (rc == LUA_YIELD && why != WHY_USER) {
        lim = vm_limit_lift(vm); /* co is suspended: growing its stack may not raise */
        if (lua_checkstack(co, 1)) lua_pushlightuserdata(co, (void *)&host_mark);
        vm_limit_restore(vm, lim);
    }
    return n + 1 + (why == WHY_USER);
}

static int co_step(lua_State *L) { return step(L, 0); }
static int co_back(lua_State *L) { return step(L, 1); }

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

/* coroutine.running: nil in a root coroutine (the main function, or a host task run by
 * sw_vm_run), as for the main thread in Lua 5.1. So process code never holds a coroutine the
 * scheduler resumes, and cannot resume one behind the scheduler's back. */
static int co_running(lua_State *L)
{
    if (L == sw_vm_of(L)->co) lua_pushnil(L);
    else lua_pushthread(L);
    return 1;
}

/* coroutine.isyieldable: false in a root coroutine, as in Lua's main thread: the scheduler's
 * resume of it is not the process's to yield to. */
static int co_isyieldable(lua_State *L)
{
    lua_pushboolean(L, L != sw_vm_of(L)->co && lua_isyieldable(L));
    return 1;
}

/* coroutine.yield: in a root coroutine an error, as yielding from Lua's main thread (so
 * `pcall(coroutine.yield)` returns false instead of ending the process); elsewhere a plain
 * yield to the resumer. */
static int co_yield (lua_State *L)
{
    if (L == sw_vm_of(L)->co) return luaL_error(L, "attempt to yield from outside a coroutine");
    return lua_yield(L, lua_gettop(L));
}

/* resume and wrap are Lua, because only Lua frames can yield and later continue; the reason
 * for a yield is read by step in C. A preemption or block of the inner coroutine makes the
 * wrapper yield outward (pass) and step in again when resumed. Stripped bytecode: the
 * wrappers raise their errors at their caller's level, so no position is lost. */
void vm_coroutine_bind(lua_State *L, int t)
{
    vm_load_shipped(L, "coroutine", "=[coroutine]");
    lua_pushcfunction(L, co_step);
    lua_pushcfunction(L, co_pass);
    lua_pushcfunction(L, co_back);
    lua_getfield(L, t, "create");
    lua_getglobal(L, "type");
    lua_getglobal(L, "error");
    lua_call(L, 6, 2);
    lua_setfield(L, t, "wrap");
    lua_setfield(L, t, "resume");
    lua_pushcfunction(L, co_running);
    lua_setfield(L, t, "running");
    lua_pushcfunction(L, co_isyieldable);
    lua_setfield(L, t, "isyieldable");
    lua_pushcfunction(L, co_yield );
    lua_setfield(L, t, "yield");
}
