/* Unit tests for host/vm.c: the sandbox (security cases S1-S9, S11, S13, S14), preemption
 * and blocking through nested user coroutines, kill from another thread (also through
 * pcall, coroutine.resume, sort comparators, xpcall handlers and pattern matching), the
 * memory limit, lazy globals, JIT mode, and the bounded string matcher against LuaJIT's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <luajit.h>
#include <lualib.h>

#include "vm.h"

/* ---- helpers -------------------------------------------------------------------------- */

typedef struct run_result {
    sw_vm_status st;
    int preempted, blocked;
} run_result;

static int owner_token;

/* recv(...): blocks, handing its arguments to the scheduler (see drive). */
static int t_recv(lua_State *L) { return sw_vm_block(L, lua_gettop(L)); }

/* owner_ok(): true when sw_vm_owner/sw_vm_of work from this coroutine. */
static int t_owner_ok(lua_State *L)
{
    lua_pushboolean(L, sw_vm_owner(L) == &owner_token && sw_vm_lua(sw_vm_of(L)) != NULL);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static sw_vm *vm_with(const char *code, const sw_vm_limits *lim)
{
    char err[256];
    sw_vm *vm = sw_vm_new(lim, &owner_token);
    assert_non_null(vm);
    lua_register(sw_vm_lua(vm), "recv", t_recv);
    lua_register(sw_vm_lua(vm), "owner_ok", t_owner_ok);
    if (sw_vm_load(vm, "=t", code, strlen(code), err, sizeof err) != 0) fail_msg("load: %s", err);
    return vm;
}

/* The scheduler stand-in. At BLOCKED it answers with the handed values doubled (numbers)
 * or, if none were handed, with 100 + the number of blocks so far. */
static run_result drive(sw_vm *vm)
{
    run_result r = {sw_vm_start(vm, 0), 0, 0};
    while (r.st == SW_VM_PREEMPTED || r.st == SW_VM_BLOCKED) {
        lua_State *t = sw_vm_thread(vm);
        int n = 0, i, top = lua_gettop(t);
        if (r.st == SW_VM_PREEMPTED) {
            r.preempted++;
        } else {
            r.blocked++;
            for (i = 1; i <= top; i++, n++) lua_pushnumber(t, lua_tonumber(t, i) * 2);
            if (n == 0) lua_pushinteger(t, 100 + r.blocked), n = 1;
        }
        r.st = sw_vm_resume(vm, n);
    }
    return r;
}

static run_result run_code(const char *code, const sw_vm_limits *lim, sw_vm **keep)
{
    sw_vm *vm = vm_with(code, lim);
    run_result r = drive(vm);
    if (r.st == SW_VM_FAILED && !keep) fail_msg("failed: %s", sw_vm_error(vm));
    if (keep) *keep = vm;
    else sw_vm_free(vm);
    return r;
}

/* Runs code that must end DONE and returns a malloc'd copy of its results as one string
 * "v1|v2|..." (strings and numbers as tostring, booleans, nil, else the type name). */
static char *results(const char *code, const sw_vm_limits *lim, run_result *out)
{
    sw_vm *vm;
    run_result r = run_code(code, lim, &vm);
    lua_State *t = sw_vm_thread(vm);
    size_t len = 0, cap = 64;
    char *s = malloc(cap);
    int i, n = lua_gettop(t);
    if (r.st != SW_VM_DONE) fail_msg("status %d: %s", r.st, sw_vm_error(vm) ? sw_vm_error(vm) : "");
    s[0] = '\0';
    for (i = 1; i <= n; i++) {
        const char *v;
        size_t vl;
        lua_pushvalue(t, i); /* tostring a copy: numbers stay numbers */
        v = lua_isnil(t, -1)       ? "nil"
            : lua_isboolean(t, -1) ? (lua_toboolean(t, -1) ? "true" : "false")
            : lua_isstring(t, -1)  ? lua_tostring(t, -1)
                                   : luaL_typename(t, -1);
        vl = strlen(v);
        while (len + vl + 2 > cap) s = realloc(s, cap *= 2);
        if (i > 1) s[len++] = '|';
        memcpy(s + len, v, vl + 1);
        len += vl;
        lua_pop(t, 1);
    }
    if (out) *out = r;
    sw_vm_free(vm);
    return s;
}

#define assert_results(code, lim, expected)    \
    do {                                       \
        char *got_ = results(code, lim, NULL); \
        assert_string_equal(got_, expected);   \
        free(got_);                            \
    } while (0)

/* Runs code that must end FAILED; returns a copy of sw_vm_error. */
static char *failure(const char *code, const sw_vm_limits *lim)
{
    sw_vm *vm;
    run_result r = run_code(code, lim, &vm);
    char *e;
    if (r.st != SW_VM_FAILED) fail_msg("expected FAILED, got %d", r.st);
    e = strdup(sw_vm_error(vm));
    sw_vm_free(vm);
    return e;
}

#define assert_fails_with(code, lim, part)                              \
    do {                                                                \
        char *e_ = failure(code, lim);                                  \
        if (!strstr(e_, part)) fail_msg("error %s lacks %s", e_, part); \
        free(e_);                                                       \
    } while (0)

/* A runner thread drives the vm; the test thread kills it. */
typedef struct runner {
    sw_vm *vm;
    run_result r;
    double ended;
} runner;

static void *runner_main(void *arg)
{
    runner *rn = arg;
    rn->r = drive(rn->vm);
    rn->ended = now_s();
    return NULL;
}

/* Kills code running in another thread after a while; returns the seconds the kill took. */
static double kill_running(const char *code, int reductions)
{
    sw_vm_limits lim = {0, reductions, 0};
    runner rn = {vm_with(code, &lim), {0, 0, 0}, 0};
    pthread_t th;
    double killed_at;
    assert_int_equal(pthread_create(&th, NULL, runner_main, &rn), 0);
    sleep_ms(60);
    killed_at = now_s();
    sw_vm_kill(rn.vm);
    pthread_join(th, NULL);
    assert_int_equal(rn.r.st, SW_VM_KILLED);
    assert_string_equal(sw_vm_error(rn.vm), "killed");
    assert_int_equal(sw_vm_resume(rn.vm, 0), SW_VM_KILLED); /* final stays final */
    sw_vm_free(rn.vm);
    return rn.ended - killed_at;
}

static const sw_vm_limits count_mode = {0, 1000, 0};
static const sw_vm_limits tick_mode = {0, 0, 0};

/* ---- sandbox: S1-S4, S9, S11, S13 ------------------------------------------------------- */

static void s1_no_dangerous_modules(void **state)
{
    (void)state;
    /* os.getenv and package are the host's (lua_api), not the bare vm's */
    assert_results("return io, package, ffi, require, module, os.execute, os.exit, os.getenv,"
                   " os.remove, debug.getlocal, debug.sethook, jit.on, jit.off, jit.opt",
                   NULL, "nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil");
    /* what common libraries read: a clock, dates, a traceback, the version */
    assert_results("return type(os.time()), os.date('!%Y-%m-%d', 86400), type(os.clock()),"
                   " type(debug.traceback('m')), jit.version:match('^LuaJIT') ~= nil, jit.status(),"
                   " pcall(function() os.time = nil end)",
                   NULL,
                   "number|1970-01-02|number|string|true|false|false|"
                   "t:1: attempt to modify a read-only library (field 'time')");
}

static void s2_binary_chunks_refused(void **state)
{
    char err[128];
    sw_vm *vm = sw_vm_new(NULL, NULL);
    (void)state;
    assert_results("local f, e = load('\\27LJ\\2\\0') return f, e:find('binary chunk') ~= nil",
                   NULL, "nil|true");
    assert_results("local f, e = loadstring('\\27LJ\\2\\0', 'x') return f, e:find('binary') ~= nil",
                   NULL, "nil|true");
    assert_results("local done\n"
                   "local f, e = load(function() if done then return nil end done = true\n"
                   "  return '\\27LJ\\2\\0' end)\n"
                   "return f, e:find('binary') ~= nil",
                   NULL, "nil|true");
    assert_results("return load('return 1 + 1', 'x', 'b')()", NULL, "2"); /* mode is forced */
    assert_int_equal(sw_vm_load(vm, "=bin", "\33LJ\2\0", 5, err, sizeof err), -1);
    assert_non_null(strstr(err, "binary"));
    sw_vm_free(vm);
}

static void s3_string_metatable_protected(void **state)
{
    (void)state;
    assert_results("return getmetatable(''), ('').dump, string.dump, ('a'):upper()", NULL,
                   "false|nil|nil|A");
    assert_results("return pcall(setmetatable, 'x', {})", NULL,
                   "false|bad argument #1 to '?' "
                   "(table expected, got string)");
}

static void s4_no_environment_functions(void **state)
{
    (void)state;
    /* getfenv/setfenv: the process's own Lua functions only (vm_compat.c) */
    assert_results("return dofile, loadfile, newproxy, gcinfo, pcall(getfenv, print)", NULL,
                   "nil|nil|nil|nil|false|getfenv: not allowed on a host function");
    assert_results("return pcall(setfenv, 0, {})", NULL,
                   "false|setfenv: level 0 (the thread's environment) is not allowed");
}

static void globals_are_an_allow_list(void **state)
{
    (void)state;
    assert_results("local n = {} for k in pairs(_G) do n[#n + 1] = k end table.sort(n)\n"
                   "return table.concat(n, ' ')",
                   NULL,
                   "_G _VERSION assert collectgarbage error getfenv getmetatable ipairs load "
                   "loadstring next owner_ok pairs pcall print rawequal rawget rawset recv select "
                   "setfenv setmetatable string tonumber tostring type unpack xpcall");
}

static void s9_collectgarbage_only_count(void **state)
{
    (void)state;
    assert_fails_with("collectgarbage('stop')", NULL, "not allowed");
    assert_fails_with("collectgarbage()", NULL, "not allowed");
    assert_results("return type(collectgarbage('count')), collectgarbage('count') > 1", NULL,
                   "number|true");
}

static void s11_processes_do_not_share_string(void **state)
{
    sw_vm *a =
        vm_with("string.upper = nil return pcall(function() return ('a'):upper() end)", NULL);
    (void)state;
    assert_int_equal(drive(a).st, SW_VM_DONE);
    assert_false(lua_toboolean(sw_vm_thread(a), 1)); /* A broke its own string methods */
    assert_results("return ('a'):upper()", NULL, "A");
    sw_vm_free(a);
}

static void s13_error_tostring_never_called(void **state)
{
    sw_vm *vm;
    double t0 = now_s();
    (void)state;
    assert_fails_with("error(setmetatable({}, {__tostring = function() while true do end end}))",
                      NULL, "(error object is a table value)");
    assert_true(now_s() - t0 < 5);
    /* errors.new-style tables: the message field, and the raw value stays readable */
    assert_int_equal(
        run_code("error({message = 'boom', kind = 'bad', retryable = false})", NULL, &vm).st,
        SW_VM_FAILED);
    assert_true(strncmp(sw_vm_error(vm), "boom\nstack traceback:", 21) == 0);
    lua_State *t = sw_vm_thread(vm);
    assert_int_equal(lua_type(t, -1), LUA_TTABLE);
    lua_pushliteral(t, "kind");
    lua_rawget(t, -2);
    assert_string_equal(lua_tostring(t, -1), "bad");
    sw_vm_free(vm);
    assert_fails_with("error(42)", NULL, "42\nstack traceback");
    assert_fails_with("error(true)", NULL, "(error object is a boolean value)");
}

static void xpcall_and_load_behave(void **state)
{
    run_result r;
    char *v;
    (void)state;
    assert_results("return xpcall(function(a, b) return a + b end, print, 2, 3)", NULL, "true|5");
    assert_results("return xpcall(function() error('e', 0) end, function(m) return 'h:' .. m end)",
                   NULL, "false|h:e");
    assert_results("return pcall(xpcall, error)", NULL,
                   "false|bad argument #2 to 'xpcall' (function expected, got nil)");
    assert_results("local co = coroutine.create(function()\n"
                   "  return xpcall(function() return coroutine.yield(1) + 1 end, print) end)\n"
                   "coroutine.resume(co) return coroutine.resume(co, 41)",
                   NULL, "true|true|42");
    v = results("return xpcall(function() local s = 0 for i = 1, 1e5 do s = s + i end return s end,"
                " print)",
                &count_mode, &r);
    assert_string_equal(v, "true|5000050000");
    assert_true(r.preempted > 100);
    free(v);
    assert_results(
        "local parts, i = {'return ', '1 + ', '2'}, 0\n"
        "local f = load(function() i = i + 1 return parts[i] end)\n"
        "return f(), load('return x', 'n', 't', {x = 5})(), select(2, load('x =', '=c'))",
        NULL, "3|5|c:1: unexpected symbol near '<eof>'");
    assert_results("return load(function() return {} end)", NULL,
                   "nil|reader function must return a string");
    assert_results("return select(2, load(function() error('rd', 0) end))", NULL, "rd");
}

static void failure_has_traceback(void **state)
{
    char *e;
    (void)state;
    e = failure("local function inner() error('deep') end\n"
                "local function outer() inner() end\n"
                "outer()\n",
                NULL);
    assert_non_null(strstr(e, "t:1: deep"));
    assert_non_null(strstr(e, "stack traceback:"));
    assert_non_null(strstr(e, "in function 'inner'"));
    assert_non_null(strstr(e, "in function 'outer'"));
    free(e);
}

static void load_reports_syntax_errors(void **state)
{
    char err[128];
    sw_vm *vm = sw_vm_new(NULL, NULL);
    (void)state;
    assert_int_equal(sw_vm_load(vm, "@app/x.lua", "return +", 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "app/x.lua:1:"));
    assert_int_equal(lua_gettop(sw_vm_lua(vm)), 0);
    sw_vm_free(vm);
}

static void print_writes_one_line(void **state)
{
    char path[] = "/tmp/test_vm_printXXXXXX", buf[128] = {0};
    int fd = mkstemp(path), saved;
    (void)state;
    assert_true(fd >= 0);
    fflush(stdout);
    saved = dup(1);
    dup2(fd, 1);
    assert_results("print('a', 1, nil, true) print() return true", NULL, "true");
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_true(pread(fd, buf, sizeof buf - 1, 0) > 0);
    close(fd);
    unlink(path);
    assert_string_equal(buf, "a\t1\tnil\ttrue\n\n");
}

static void owner_visible_from_coroutines(void **state)
{
    (void)state;
    assert_results("return owner_ok(), coroutine.wrap(function() return owner_ok() end)()", NULL,
                   "true|true");
}

/* ---- lazy globals ----------------------------------------------------------------------- */

static int open_foo(lua_State *L)
{
    lua_newtable(L);
    lua_pushinteger(L, 7);
    lua_setfield(L, -2, "x");
    return 1;
}

static int spawn_stub(lua_State *L)
{
    lua_pushliteral(L, "spawned");
    return 1;
}

static int extend_coroutine(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE); /* the builtin library, to extend */
    lua_pushcfunction(L, spawn_stub);
    lua_setfield(L, 1, "spawn");
    lua_settop(L, 1);
    return 1;
}

static const sw_vm_lib test_libs[] = {
    {"foo", open_foo}, {"coroutine", extend_coroutine}, {NULL, NULL}};

static void lazy_globals(void **state)
{
    sw_vm *vm;
    (void)state;
    assert_results("local before = rawget(_G, 'math') local m = math\n"
                   "return before, m == rawget(_G, 'math'), m.floor(2.5), bit.band(6, 3),\n"
                   "  table.concat({1, 2}, ',')",
                   NULL, "nil|true|2|2|1,2");
    assert_results("local m = math math = nil return math, m ~= nil", NULL, "nil|true");
    assert_results("return getmetatable(_G), pcall(setmetatable, _G, {})", NULL,
                   "false|false|cannot change a protected metatable");
    vm = vm_with("return foo.x, coroutine.spawn(), type(coroutine.resume), nothing", NULL);
    sw_vm_set_libs(vm, test_libs);
    assert_int_equal(drive(vm).st, SW_VM_DONE);
    assert_int_equal(lua_tointeger(sw_vm_thread(vm), 1), 7);
    assert_string_equal(lua_tostring(sw_vm_thread(vm), 2), "spawned");
    assert_string_equal(lua_tostring(sw_vm_thread(vm), 3), "function");
    assert_true(lua_isnil(sw_vm_thread(vm), 4));
    sw_vm_free(vm);
}

/* base and string open on first need (vm_sandbox.c open_builtins): a fresh state holds
 * none of them, and no order of first reads, writes or string methods shows it. */
static void lazy_builtins(void **state)
{
    (void)state;
    sw_vm *vm = sw_vm_new(NULL, &owner_token);
    assert_non_null(vm);
    assert_true(sw_vm_memory(vm) < 14 * 1024); /* ~20 KB with base and string open */
    sw_vm_free(vm);
    /* an assignment first: not undone when the builtins open afterwards */
    assert_results("print = nil return type(print)", NULL, "nil");
    assert_results("gcinfo = 1 return gcinfo, rawget(_G, 'gcinfo')", NULL, "1|1");
    assert_results("x = 2 return x, rawget(_G, 'x'), type(pairs)", NULL, "2|2|function");
    /* a string method first, then the protected string metatable */
    assert_results("return ('ab'):upper(), getmetatable(''), ('x'):rep(3)", NULL, "AB|false|xxx");
    assert_results("return #('abc'), 'a' .. 1, ('q'):len()", NULL, "3|a1|1");
    /* a lazy library first, a builtin after; coroutine needs base */
    assert_results("local f = math.floor return f(2.5), type(tostring), type(coroutine.wrap)", NULL,
                   "2|function|function");
    assert_results("return rawget(_G, 'coroutine'), rawget(_G, 'newproxy'), _VERSION", NULL,
                   "nil|nil|Lua 5.1");
    /* out of memory while opening them: the process fails, whatever catches the error */
    sw_vm_limits tight = {16 * 1024, SW_VM_REDUCTIONS_DEFAULT, 0};
    assert_fails_with("pcall(function() return ('x'):upper() end) return ('y'):upper()", &tight,
                      "memory limit exceeded");
    assert_fails_with("pcall(function() return type end) return type(1)", &tight,
                      "memory limit exceeded");
}

/* ---- preemption and coroutines ---------------------------------------------------------- */

static void s5_plain_loop_is_preempted(void **state)
{
    run_result r;
    char *v = results("local s = 0 for i = 1, 1e6 do s = s + i end return s", &count_mode, &r);
    (void)state;
    assert_string_equal(v, "500000500000");
    assert_true(r.preempted >= 1000); /* >= 2e6 instructions in slices of 1000 */
    free(v);
}

static void preempted_inside_pcall_and_metamethods(void **state)
{
    run_result r;
    char *v = results("local t = setmetatable({}, {__index = function(_, k)\n"
                      "  local s = 0 for i = 1, 1e5 do s = s + i end return s + k end})\n"
                      "return pcall(function() return t[1] end)",
                      &count_mode, &r);
    (void)state;
    assert_string_equal(v, "true|5000050001");
    assert_true(r.preempted > 100);
    free(v);
}

/* The hook fires where yielding is impossible (an xpcall handler of a VM error, a sort
 * comparator): it must wait, never raise "attempt to yield across C-call boundary". */
static void no_preemption_where_yield_is_impossible(void **state)
{
    (void)state;
    assert_results("return xpcall(function() local x = nil + 1 end, function(m)\n"
                   "  local s = 0 for i = 1, 1e5 do s = s + i end return s end)",
                   &count_mode, "false|5000050000");
    assert_results("local t = {5, 3, 1, 4, 2}\n"
                   "table.sort(t, function(a, b) for i = 1, 1e4 do end return a < b end)\n"
                   "return table.concat(t, ',')",
                   &count_mode, "1,2,3,4,5");
    assert_results("return (('abc'):gsub('.', function(c) for i = 1, 1e4 do end\n"
                   "  return c:upper() end))",
                   &count_mode, "ABC");
}

static void passthrough_nested_coroutines(void **state)
{
    run_result r;
    char *v =
        results("local function loop(n) local s = 0 for i = 1, n do s = s + 1 end return s end\n"
                "local outer = coroutine.create(function(a)\n"
                "  local middle = coroutine.wrap(function(b)\n"
                "    local inner = coroutine.create(function(c)\n"
                "      local got = coroutine.yield(loop(3e5) + c)\n"
                "      return got, 'inner done'\n"
                "    end)\n"
                "    local ok1, v1 = coroutine.resume(inner, b)\n"
                "    local ok2, v2, v3 = coroutine.resume(inner, 'to inner')\n"
                "    coroutine.yield(v1 + loop(1e5))\n"
                "    return v2 .. '/' .. v3 .. '/' .. tostring(ok1 and ok2)\n"
                "  end)\n"
                "  local first = middle(a)\n"
                "  local second = middle()\n"
                "  local back = coroutine.yield(first, second)\n"
                "  return back\n"
                "end)\n"
                "local ok, x, y = coroutine.resume(outer, 1)\n"
                "local ok2, z = coroutine.resume(outer, 'last')\n"
                "return ok, x, y, ok2, z, coroutine.status(outer)",
                &count_mode, &r);
    (void)state;
    assert_string_equal(v, "true|400001|to inner/inner done/true|true|last|dead");
    assert_true(r.preempted > 200);
    free(v);
}

static void s7_style_loop_in_coroutine_returns_values(void **state)
{
    run_result r;
    char *v = results("local co = coroutine.create(function(a)\n"
                      "  local s = 0 for i = 1, 6e5 do s = s + i end return a, s end)\n"
                      "return coroutine.resume(co, 'x')",
                      &count_mode, &r);
    (void)state;
    assert_string_equal(v, "true|x|180000300000");
    assert_true(r.preempted > 500);
    free(v);
}

/* The main coroutine is the scheduler's: process code cannot get hold of it. */
static void root_coroutine_is_not_visible(void **state)
{
    (void)state;
    assert_results("local inner = coroutine.create(function() return coroutine.running() end)\n"
                   "local ok, me = coroutine.resume(inner)\n"
                   "return coroutine.running(), me == inner",
                   NULL, "nil|true");
}

static void user_yield_at_top_fails(void **state)
{
    (void)state;
    assert_fails_with("coroutine.yield(1)", NULL, "attempt to yield from outside a coroutine");
}

/* As in Lua's main thread: the root cannot yield, and says so (pcall catches it). */
static void root_is_not_yieldable(void **state)
{
    (void)state;
    assert_results("local ok, e = pcall(coroutine.yield, 1)\n"
                   "local inner = coroutine.wrap(function() return coroutine.isyieldable() end)\n"
                   "return coroutine.isyieldable(), ok, e, inner()",
                   NULL, "false|false|attempt to yield from outside a coroutine|true");
}

static void deep_coroutine_nesting_is_an_error(void **state)
{
    (void)state; /* raw LuaJIT overflows the C stack here and crashes */
    assert_results("local depth = 0\n"
                   "local function f() depth = depth + 1 coroutine.wrap(f)() end\n"
                   "local ok, e = pcall(f)\n"
                   "return ok, e:match('C stack overflow') ~= nil, depth <= 201",
                   NULL, "false|true|true");
}

static void c_callback_recursion_is_an_error(void **state)
{
    (void)state; /* raw LuaJIT segfaults on the first one */
    assert_results("local function f(c) return (('ab'):gsub('.', f)) end\n"
                   "return select(2, pcall(f, 'ab')):match('C stack overflow') ~= nil",
                   NULL, "true");
    assert_results("local function cmp(a, b) table.sort({3, 2, 1}, cmp) return a < b end\n"
                   "return pcall(table.sort, {3, 2, 1}, cmp)",
                   NULL, "false|t:1: C stack overflow");
}

/* ---- blocking ------------------------------------------------------------------------- */

static void block_at_top_level(void **state)
{
    run_result r;
    char *v = results("local a, b = recv(3, 4) local c = recv() return a, b, c", NULL, &r);
    (void)state;
    assert_string_equal(v, "6|8|102");
    assert_int_equal(r.blocked, 2);
    free(v);
}

static void block_passes_through_coroutines(void **state)
{
    run_result r;
    char *v = results("local gen = coroutine.wrap(function()\n"
                      "  local inner = coroutine.wrap(function()\n"
                      "    for i = 1, 3 do coroutine.yield(recv(i)) end\n"
                      "  end)\n"
                      "  for i = 1, 3 do coroutine.yield(inner() + 1000) end\n"
                      "end)\n"
                      "local pc = coroutine.create(function() return pcall(recv, 21) end)\n"
                      "return gen(), gen(), gen(), select(2, coroutine.resume(pc))",
                      &count_mode, &r);
    (void)state;
    assert_string_equal(v, "1002|1004|1006|true|42");
    assert_int_equal(r.blocked, 4);
    free(v);
}

static void resume_with_many_values(void **state)
{
    sw_vm_limits lim = {1u << 20, 10000, 0};
    sw_vm *vm = vm_with("return select('#', recv())", &lim);
    lua_State *t;
    int i;
    (void)state;
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_BLOCKED);
    t = sw_vm_thread(vm);
    assert_int_equal(sw_vm_reserve(vm, t, 500), 1);
    for (i = 0; i < 500; i++) lua_pushinteger(t, i);
    assert_int_equal(sw_vm_resume(vm, 500), SW_VM_DONE);
    assert_int_equal(lua_tointeger(t, 1), 500);
    sw_vm_free(vm);
}

static void block_in_a_c_callback_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("table.sort({2, 1}, function(a, b) recv() return a < b end)", NULL,
                      "cannot block here");
    assert_fails_with("local co = coroutine.wrap(function() recv() end)\n"
                      "table.sort({2, 1}, function(a, b) co() return a < b end)",
                      NULL, "cannot block");
}

static void blocked_vm_freed_without_resume(void **state)
{
    sw_vm *vm =
        vm_with("local co = coroutine.wrap(function() return recv() end) return co()", NULL);
    (void)state;
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_BLOCKED);
    sw_vm_free(vm); /* ASan checks nothing leaks */
}

static void misuse_of_start_and_resume(void **state)
{
    sw_vm *vm = sw_vm_new(NULL, NULL);
    (void)state;
    assert_int_equal(sw_vm_resume(vm, 0), SW_VM_FAILED); /* not started */
    lua_pushinteger(sw_vm_lua(vm), 1);
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_FAILED); /* not a function */
    assert_non_null(strstr(sw_vm_error(vm), "no function"));
    sw_vm_free(vm);
    vm = vm_with("return ...", NULL);
    lua_pushinteger(sw_vm_lua(vm), 5);
    lua_pushliteral(sw_vm_lua(vm), "x");
    assert_int_equal(sw_vm_start(vm, 2), SW_VM_DONE);
    assert_int_equal(lua_gettop(sw_vm_thread(vm)), 2);
    assert_string_equal(lua_tostring(sw_vm_thread(vm), 2), "x");
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_FAILED); /* twice */
    sw_vm_free(vm);
}

/* ---- kill --------------------------------------------------------------------------------- */

static void s5_kill_infinite_loop(void **state)
{
    (void)state;
    assert_true(kill_running("while true do end", 1000) < 1);
    assert_true(kill_running("while true do end", 0) < 1); /* no count hook: the kill arms one */
}

static void s6_kill_through_pcall(void **state)
{
    const char *s6 = "while true do pcall(function() while true do end end) end";
    (void)state;
    assert_true(kill_running(s6, 1000) < 1);
    assert_true(kill_running(s6, 0) < 1);
}

/* After a kill raised by the hook, LuaJIT runs xpcall handlers with hooks off, and its load
 * leaves them off after a reader fails: the sandbox's xpcall and load must cover both. */
static void kill_through_handlers_and_readers(void **state)
{
    const char *codes[] = {
        "while true do xpcall(function() while true do end end,\n"
        "  function() while true do end end) end",
        "xpcall(function() table.sort({3, 2, 1}, function() while true do end end) end,\n"
        "  function() while true do end end)",
        "while true do load(function() while true do end end) end",
        "while true do pcall(load, function() while true do end end) end",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof codes / sizeof *codes; i++) {
        assert_true(kill_running(codes[i], 1000) < 1);
        assert_true(kill_running(codes[i], 0) < 1);
    }
}

static void s7_kill_through_coroutine_resume(void **state)
{
    const char *s7 = "while true do coroutine.resume(coroutine.create(function() "
                     "while true do end end)) end";
    (void)state;
    assert_true(kill_running(s7, 1000) < 1);
    assert_true(kill_running(s7, 0) < 1);
    assert_true(kill_running("while true do pcall(coroutine.wrap(function() "
                             "pcall(error, 'x') while true do end end)) end",
                             1000) < 1);
}

static void kill_inside_sort_comparator(void **state)
{
    const char *code = "table.sort({3, 2, 1}, function(a, b) while true do end end)";
    (void)state;
    assert_true(kill_running(code, 1000) < 1);
    assert_true(kill_running(code, 0) < 1);
}

static void kill_before_running(void **state)
{
    sw_vm *vm = vm_with("return 1", NULL);
    (void)state;
    sw_vm_kill(vm);
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_KILLED);
    sw_vm_free(vm);
    vm = vm_with("local s = 0 for i = 1, 1e6 do s = s + i end return s", &count_mode);
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_PREEMPTED);
    sw_vm_kill(vm); /* while preempted */
    assert_int_equal(sw_vm_resume(vm, 0), SW_VM_KILLED);
    sw_vm_free(vm);
    vm = vm_with("return recv()", NULL);
    assert_int_equal(sw_vm_start(vm, 0), SW_VM_BLOCKED);
    sw_vm_kill(vm); /* while blocked */
    lua_pushinteger(sw_vm_thread(vm), 1);
    assert_int_equal(sw_vm_resume(vm, 1), SW_VM_KILLED);
    sw_vm_free(vm);
}

/* ---- memory --------------------------------------------------------------------------- */

static void s8_memory_limit(void **state)
{
    sw_vm_limits lim = {32u << 20, 10000, 0};
    sw_vm *vm;
    (void)state;
    /* distinct strings: 32 iterations of 1 MB (S8 as written interns one string and only the
     * table grows: it also fails, after ~2M iterations; the 1 MB case below is that code) */
    assert_fails_with("local t = {} while true do t[#t + 1] = ('x'):rep(1e6) .. #t end", &lim,
                      "memory limit exceeded");
    lim.memory = 1u << 20;
    assert_fails_with("local t = {} while true do t[#t+1] = (\"x\"):rep(1e6) end", &lim,
                      "memory limit exceeded");
    /* catching the error does not help: the process fails */
    lim.memory = 4u << 20;
    assert_fails_with("local ok = pcall(function() local t = {}\n"
                      "  while true do t[#t + 1] = ('y'):rep(1e5) .. #t end end)\n"
                      "while true do end",
                      &lim, "memory limit exceeded");
    /* the host lives on: a fresh process runs, and the limit counts its own bytes */
    assert_int_equal(run_code("return 1", &lim, &vm).st, SW_VM_DONE);
    assert_true(sw_vm_memory(vm) > 10000 && sw_vm_memory(vm) < lim.memory);
    sw_vm_free(vm);
}

/* A service's budget inside the host's (docs/supervision.md "Resources"): a state's steps
 * count in both, the inner cap refuses with its own refusal and marks itself, the outer one
 * is left as it was, and peaks follow. */
static void budget_inside_a_budget(void **state)
{
    sw_vm_budget host = {0}, svc = {.parent = &host, .refusal = "memory limit exceeded"};
    atomic_store(&svc.cap, (size_t)4 << 20);
    (void)state;
    sw_vm *vm = vm_with("local t = {} while true do t[#t + 1] = ('z'):rep(1e5) .. #t end", NULL);
    sw_vm_set_budget(vm, &svc);
    size_t first = atomic_load(&svc.used);
    assert_true(first > 0 && first == atomic_load(&host.used));
    assert_int_equal(drive(vm).st, SW_VM_FAILED);
    assert_non_null(strstr(sw_vm_error(vm), "memory limit exceeded"));
    assert_string_equal(sw_vm_oom_error(vm), "memory limit exceeded");
    assert_true(atomic_load(&svc.refused));
    assert_false(atomic_load(&host.refused));
    assert_true(atomic_load(&svc.used) <= atomic_load(&svc.cap));
    assert_int_equal(atomic_load(&svc.used), atomic_load(&host.used));
    assert_true(atomic_load(&svc.peak) > (size_t)3 << 20 &&
                atomic_load(&host.peak) == atomic_load(&svc.peak));
    sw_vm_free(vm);
    assert_int_equal(atomic_load(&svc.used), 0);
    assert_int_equal(atomic_load(&host.used), 0);
    /* the outer cap refuses with its own text (the default: the host's) */
    atomic_store(&svc.cap, 0);
    atomic_store(&host.cap, (size_t)2 << 20);
    atomic_store(&svc.refused, false);
    vm = vm_with("local t = {} while true do t[#t + 1] = ('w'):rep(1e5) .. #t end", NULL);
    sw_vm_set_budget(vm, &svc);
    assert_int_equal(drive(vm).st, SW_VM_FAILED);
    assert_string_equal(sw_vm_oom_error(vm), "host memory limit reached");
    assert_true(atomic_load(&host.refused));
    assert_false(atomic_load(&svc.refused));
    sw_vm_free(vm);
    assert_int_equal(atomic_load(&host.used), 0);
}

/* LuaJIT never collects when an allocation fails: the vm asks for a collection itself as
 * the heap nears the limit, so live data close to the limit survives garbage churn. */
static void live_data_near_the_limit_survives_garbage(void **state)
{
    const char *code = "local live = {} for i = 1, 70 do live[i] = ('x'):rep(1e5) .. i end\n"
                       "local n = 0 for i = 1, 3000 do n = n + #(('y'):rep(1e5) .. i) end\n"
                       "return n";
    sw_vm_limits lim = {8u << 20, 10000, 0};
    (void)state;
    assert_results(code, &lim, "300010893");
    lim.reductions = 0;
    assert_results(code, &lim, "300010893");
    /* not with jit = 1: compiled traces never run the hook that collects */
}

static void memory_is_counted(void **state)
{
    sw_vm *vm = sw_vm_new(NULL, NULL);
    size_t before = sw_vm_memory(vm);
    (void)state;
    lua_pushstring(sw_vm_lua(vm), "a string long enough to be counted properly, surely");
    assert_true(sw_vm_memory(vm) > before);
    lua_pop(sw_vm_lua(vm), 1);
    lua_gc(sw_vm_lua(vm), LUA_GCCOLLECT, 0);
    assert_true(sw_vm_memory(vm) <= before + 64);
    sw_vm_free(vm);
}

/* ---- JIT and interrupts ---------------------------------------------------------------- */

static void jit_mode_runs(void **state)
{
    sw_vm_limits lim = {0, 1000, 1};
    run_result r;
    char *v = results("local s = 0 for i = 1, 1e7 do s = s + i % 3 end"
                      " return s, jit.status(), jit.on",
                      &lim, &r);
    (void)state;
    assert_string_equal(v, "10000000|true|nil"); /* compiled, and no switch reachable */
    assert_int_equal(r.preempted, 0);
    free(v);
}

typedef struct ticker {
    sw_vm *vm;
    atomic_int stop; /* volatile is no synchronisation: ThreadSanitizer reports it as a race */
} ticker;

static void *ticker_main(void *arg)
{
    ticker *tk = arg;
    while (!atomic_load(&tk->stop)) {
        sw_vm_interrupt(tk->vm);
        sleep_ms(1);
    }
    return NULL;
}

static run_result run_with_ticker(const char *code, sw_vm **vm)
{
    runner rn = {vm_with(code, &tick_mode), {0, 0, 0}, 0};
    ticker tk = {rn.vm, 0};
    pthread_t tr, tt;
    assert_int_equal(pthread_create(&tt, NULL, ticker_main, &tk), 0);
    assert_int_equal(pthread_create(&tr, NULL, runner_main, &rn), 0);
    pthread_join(tr, NULL);
    atomic_store(&tk.stop, 1);
    pthread_join(tt, NULL);
    *vm = rn.vm;
    return rn.r;
}

static void interrupt_preempts_without_count_hook(void **state)
{
    sw_vm *vm;
    run_result r = run_with_ticker("local s = 0 for i = 1, 3e7 do s = s + i % 3 end return s", &vm);
    (void)state;
    assert_int_equal(r.st, SW_VM_DONE);
    assert_true(r.preempted >= 1);
    assert_int_equal(lua_tointeger(sw_vm_thread(vm), 1), 30000000);
    sw_vm_free(vm);
    /* through nested user coroutines too */
    r = run_with_ticker(
        "local w = coroutine.wrap(function() local inner = coroutine.wrap(\n"
        "  function() local s = 0 for i = 1, 3e7 do s = s + i % 3 end return s end)\n"
        "  return inner() end)\n"
        "return w()",
        &vm);
    assert_int_equal(r.st, SW_VM_DONE);
    assert_true(r.preempted >= 1);
    assert_int_equal(lua_tointeger(sw_vm_thread(vm), 1), 30000000);
    sw_vm_free(vm);
}

/* ---- S14 and the bounded matcher ---------------------------------------------------------- */

static void s14_catastrophic_pattern(void **state)
{
    double t0 = now_s();
    (void)state;
    assert_fails_with("string.find(('a'):rep(30), ('a?'):rep(30) .. ('a'):rep(30))", NULL,
                      "pattern too complex");
    assert_true(now_s() - t0 < 10);
    /* and a kill lands inside the matcher, well before the budget of one call (~27M steps,
     * most of a second at -O2) runs out */
    assert_true(kill_running("local s = ('a'):rep(400000)\n"
                             "while true do pcall(string.find, s, ('a?'):rep(60) .. 'b') end",
                             1000) < 0.5);
}

static const char pattern_cases[] =
    "local out = {}\n"
    "local function rec(...)\n"
    "  local t = {}\n"
    "  for i = 1, select('#', ...) do local v = select(i, ...)\n"
    "    t[i] = type(v) == 'string' and ('%q'):format(v) or tostring(v) end\n"
    "  out[#out + 1] = table.concat(t, ',')\n"
    "end\n"
    "local subjects = {'', 'a', 'hello world', '  trim me  ', 'key=val; k2=v2',\n"
    "  'THE (quick) fox', 'f(a(b)c)d', 'aaa', 'a.b-c+d*e?f[g]h^i$j%k', 'x = 1, y = 2',\n"
    "  '\\0a\\0b', 'abc123DEF_ \\t\\n', ('ab'):rep(20), '\\195\\167\\195\\163o'}\n"
    "local patterns = {'', 'a', '.', '%a+', '%d+', '(%w+)=(%w+)', '^%s*(.-)%s*$',\n"
    "  '%f[%a]%a+', '%b()', '()a()', '(a*)%1', '[%a_][%w_]*', '[^%s]+', 'a-b', 'a?',\n"
    "  'a*', '.-', '[a-c]+', '[]]', '[^]]', '%.', '%%', '^a', 'a$', '^$', '(.)(.)(.)',\n"
    "  '((a)(b))', '%z', '[%z]', '%u%l', '%x+', '%p', '%c', '%g+', '[%d%s]+', '[a-]',\n"
    "  '[-a]', '%S+', '%W', '(h)(e)(l)(l)(o)', 'o', 'l+', '(%a)%1', '%f[%w]%w+%f[%W]',\n"
    "  '[%]]', 'x*$', '[\\128-\\255]+', '%A+', '.\\0', 'b-$', '(a)(b)?', '[%a-z]', '%bab'}\n"
    "local bad = {'%', '[a', '(', ')', '%1', '(()', '%b', '%bx', '%f', '%fa', '[%',\n"
    "  '(a)%2', ('('):rep(33) .. ('a)'):rep(33), ('a?'):rep(250)}\n"
    "for _, s in ipairs(subjects) do\n"
    "  for _, p in ipairs(patterns) do\n"
    "    rec(pcall(string.find, s, p))\n"
    "    rec(pcall(string.find, s, p, 2))\n"
    "    rec(pcall(string.find, s, p, -3))\n"
    "    rec(pcall(string.find, s, p, 100))\n"
    "    rec(pcall(string.find, s, p, 1, true))\n"
    "    rec(pcall(string.match, s, p))\n"
    "    rec(pcall(string.match, s, p, 3))\n"
    "    rec(pcall(string.gsub, s, p, '<%0>'))\n"
    "    rec(pcall(string.gsub, s, p, '%1', 2))\n"
    "    local ok, it = pcall(string.gmatch, s, p)\n"
    "    if ok then local n = 0\n"
    "      while n < 50 do local r = {pcall(it)} if r[2] == nil then break end\n"
    "        rec(unpack(r)) n = n + 1 end end\n"
    "  end\n"
    "end\n"
    "for _, p in ipairs(bad) do\n"
    "  rec(pcall(string.find, 'aaa', p)) rec(pcall(string.gsub, 'aaa', p, 'x'))\n"
    "  rec(pcall(string.match, 'aaa', p)) rec(pcall(function() for _ in ('aaa'):gmatch(p) do end "
    "end))\n"
    "end\n"
    "rec(('hello world'):gsub('o', '%%'))\n"
    "rec(('hello'):gsub('l', {l = 'L'}))\n"
    "rec(('hello'):gsub('l', {l = false}))\n"
    "rec(('hello'):gsub('(l)', function(c) return nil end))\n"
    "rec(('hello'):gsub('(h)(e)', function(a, b) return b .. a end))\n"
    "rec(('hello'):gsub('()', function(p) return p end))\n"
    "rec(('abc'):gsub('%w', '%0%0'))\n"
    "rec(('abc'):gsub('', '-'))\n"
    "rec(('abc'):gsub('.', 'x', 0))\n"
    "rec(('abc'):gsub('.', 'x', -1))\n"
    "rec(('abc'):gsub('b', 5))\n"
    "rec(('abc'):gsub('b', 2.5))\n"
    "rec(('x'):gsub('x', 'a%'))\n"
    "rec(('x'):gsub('x', '%a'))\n"
    "rec(pcall(string.gsub, 'abc', 'b', {}))\n"
    "rec(pcall(string.gsub, 'abc', 'b', function() return {} end))\n"
    "rec(pcall(string.gsub, 'abc', 'b', true))\n"
    "rec(pcall(string.gsub, 'abc', '(b)', '%2'))\n"
    "rec(pcall(string.gsub, 'abc', 'b'))\n"
    "rec(pcall(string.find))\n"
    "rec(pcall(string.find, 'a'))\n"
    "rec(pcall(string.gmatch, 'a'))\n"
    "rec(string.find(123, 2))\n"
    "rec(string.gsub(12321, 2, 0))\n"
    "rec(string.find('a+b', '+', 1, true))\n"
    "rec(string.find('a+b', '+', 1, false))\n"
    "rec(string.find('abc', '', 10))\n"
    "rec(string.find('abc', 'c', 10))\n"
    "rec(string.find('abc', 'c', -100))\n"
    "rec(string.match('abc', 'b', 10))\n"
    "rec(('abc'):find('b', nil))\n"
    "rec(('aXb'):find('x', 1, true))\n"
    "rec(('a\\0b'):find('\\0b'))\n"
    "rec(('aaab'):find(('a'):rep(3) .. 'b', 1, true))\n"
    "for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do rec(k, v) end\n"
    "for w in string.gmatch('^a^a', '^a') do rec(w) end\n"
    "for w in string.gmatch('abc', '') do rec(w) end\n"
    "for p in string.gmatch('abc', '()') do rec(p) end\n"
    "for a, b in string.gmatch('a,b,,c', '([^,]*)') do rec(a, b) end\n"
    "return table.concat(out, '\\n')\n";

/* The same script through LuaJIT's own string functions and through the sandbox's. */
static void matcher_agrees_with_luajit(void **state)
{
    lua_State *L = luaL_newstate();
    char *mine;
    const char *theirs;
    (void)state;
    luaL_openlibs(L);
    if (luaL_loadbuffer(L, pattern_cases, sizeof pattern_cases - 1, "=t") || lua_pcall(L, 0, 1, 0))
        fail_msg("reference: %s", lua_tostring(L, -1));
    theirs = lua_tostring(L, -1);
    mine = results(pattern_cases, NULL, NULL);
    if (strcmp(mine, theirs) != 0) {
        size_t i = 0;
        while (mine[i] == theirs[i]) i++;
        while (i > 0 && mine[i - 1] != '\n') i--;
        fail_msg("first difference:\nmine:   %.200s\nluajit: %.200s", mine + i, theirs + i);
    }
    assert_true(strlen(mine) > 50000); /* the script really ran */
    free(mine);
    lua_close(L);
}

static const char coroutine_cases[] =
    "local out = {}\n"
    "local function rec(...)\n"
    "  local t = {}\n"
    "  for i = 1, select('#', ...) do local v = select(i, ...)\n"
    "    t[i] = type(v) == 'string' and v or type(v) end\n"
    "  out[#out + 1] = table.concat(t, ',')\n"
    "end\n"
    "local co = coroutine.create(function(a, b) local c = coroutine.yield(a + b)\n"
    "  local d, e = coroutine.yield(c * 2) return d + e, 'done' end)\n"
    "rec(coroutine.resume(co, 1, 2)) rec(coroutine.status(co)) rec(coroutine.resume(co, 10))\n"
    "rec(coroutine.resume(co, 3, 4)) rec(coroutine.status(co)) rec(coroutine.resume(co))\n"
    "local e = coroutine.create(function() error('oops') end)\n"
    "rec(coroutine.resume(e)) rec(coroutine.status(e)) rec(coroutine.resume(e))\n"
    "local e2 = coroutine.create(function() error({code = 1}) end)\n"
    "local ok, v = coroutine.resume(e2) rec(ok, type(v), v.code)\n"
    "local w = coroutine.wrap(function(...) local x = coroutine.yield(...) return x, 'end' end)\n"
    "rec(w(1, 2, 3)) rec(w('x')) rec(pcall(w))\n"
    "local w2 = coroutine.wrap(function() error('werr') end) rec(pcall(w2))\n"
    "local w3 = coroutine.wrap(function() error({1}) end) local ok3, v3 = pcall(w3)\n"
    "rec(ok3, type(v3))\n"
    "local w4 = coroutine.wrap(function() error('direct') end)\n"
    "rec(pcall(function() w4() end))\n"
    "local w5 = coroutine.wrap(function() end) w5()\n"
    "rec(pcall(function() w5() end))\n"
    "local function gen(n) return coroutine.wrap(function() for i = 1, n do\n"
    "  coroutine.yield(i) end end) end\n"
    "local s = 0 for i in gen(10) do s = s + i end rec(s)\n"
    "local self\n"
    "self = coroutine.create(function() return coroutine.resume(self) end)\n"
    "rec(coroutine.resume(self))\n"
    "local yp = coroutine.create(function() return pcall(function()\n"
    "  local v = coroutine.yield(1) error('after ' .. v, 0) end) end)\n"
    "rec(coroutine.resume(yp)) rec(coroutine.resume(yp, 'x'))\n"
    "local outer = coroutine.wrap(function() local inner = coroutine.wrap(function()\n"
    "  coroutine.yield('i1') coroutine.yield('i2') end)\n"
    "  coroutine.yield(inner()) coroutine.yield(inner()) end)\n"
    "rec(outer()) rec(outer())\n"
    "rec(select('#', coroutine.resume(coroutine.create(function() return end))))\n"
    "rec(coroutine.resume(coroutine.create(function(...) return select('#', ...), ... end),\n"
    "  nil, 2, nil))\n"
    "return table.concat(out, '\\n')\n";

static void coroutines_agree_with_luajit(void **state)
{
    lua_State *L = luaL_newstate();
    char *mine;
    (void)state;
    luaL_openlibs(L);
    if (luaL_loadbuffer(L, coroutine_cases, sizeof coroutine_cases - 1, "=t") ||
        lua_pcall(L, 0, 1, 0))
        fail_msg("reference: %s", lua_tostring(L, -1));
    mine = results(coroutine_cases, &count_mode, NULL);
    assert_string_equal(mine, lua_tostring(L, -1));
    free(mine);
    lua_close(L);
    assert_results("return pcall(coroutine.resume, 5)", NULL,
                   "false|bad argument #1 to 'resume' (coroutine expected)");
    assert_results("return pcall(coroutine.wrap, 5)", NULL,
                   "false|bad argument #1 to 'wrap' (function expected, got number)");
}

/* ---- the sandbox's own builtins (vm_builtins.c) ---------------------------------------- */

static char *read_spec_file(const char *name)
{
    char path[512];
    FILE *f;
    long n;
    char *text;
    snprintf(path, sizeof path, "%s/c/%s", SPEC_DIR, name);
    f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc((size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void assert_same_text(const char *mine, const char *theirs, const char *what)
{
    if (strcmp(mine, theirs) != 0) {
        size_t i = 0;
        while (mine[i] == theirs[i]) i++;
        while (i > 0 && mine[i - 1] != '\n') i--;
        fail_msg("%s, first difference:\nmine:   %.300s\nluajit: %.300s", what, mine + i,
                 theirs + i);
    }
}

/* tostring, string.sub/upper/lower/reverse/char (plain C in a process with a memory limit),
 * rawset and table.insert/remove/sort give LuaJIT's results (spec/c/vm_builtins_cases.lua). */
static void builtins_agree_with_luajit(void **state)
{
    char *code = read_spec_file("vm_builtins_cases.lua");
    lua_State *L = luaL_newstate();
    sw_vm_limits limited = {64u << 20, 0, 0};
    char *mine;
    const char *theirs;
    (void)state;
    luaL_openlibs(L);
    luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
    if (luaL_loadbuffer(L, code, strlen(code), "=t") || lua_pcall(L, 0, 1, 0))
        fail_msg("reference: %s", lua_tostring(L, -1));
    theirs = lua_tostring(L, -1);
    assert_true(strlen(theirs) > 50000); /* the script really ran */
    mine = results(code, &limited, NULL);
    assert_same_text(mine, theirs, "with a memory limit");
    free(mine);
    mine = results(code, NULL, NULL);
    assert_same_text(mine, theirs, "without a memory limit");
    free(mine);
    lua_close(L);
    free(code);
}

/* Outside 1..#t+1, insert and remove raise (Lua 5.3) instead of looping over 2^31 slots. */
static void insert_and_remove_check_positions(void **state)
{
    const char *oob = "false|bad argument #2 to '?' (position out of bounds)";
    double t0 = now_s();
    (void)state;
    assert_results("return pcall(table.insert, {}, 2^40, 1)", NULL, oob);
    assert_results("return pcall(table.insert, {1, 2}, 0, 1)", NULL, oob);
    assert_results("return pcall(table.insert, {1, 2}, 4, 1)", NULL, oob);
    assert_results("return pcall(table.remove, {}, -2^40)", NULL, oob);
    assert_results("return pcall(table.remove, {1, 2}, 4)", NULL, oob);
    assert_results("return pcall(table.remove, {1, 2}, 0/0)", NULL, oob);
    assert_results("return pcall(table.remove, {1, 2}, '9')", NULL, oob);
    assert_results("return pcall(function() table.insert({}, -1, 1) end)", NULL,
                   "false|t:1: bad argument #2 to 'insert' (position out of bounds)");
    assert_true(now_s() - t0 < 2);
}

/* kill_then(f, ...): requests this process's kill, then calls f(...) from C: no VM
 * instruction (so no hook) runs before f ends, so only f's own polling can stop it. */
static int t_kill_then(lua_State *L)
{
    sw_vm_kill(sw_vm_of(L));
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static lua_Integer global_at(sw_vm *vm, const char *name, int i)
{
    lua_State *L = sw_vm_lua(vm);
    lua_Integer v;
    lua_getglobal(L, name);
    lua_rawgeti(L, -1, i);
    v = lua_tointeger(L, -1);
    lua_pop(L, 2);
    return v;
}

/* A kill stops long moves in insert (over MOVES_UNPOLLED), remove (LuaJIT's bytecode) and
 * sort (no Lua code runs in insert's or sort's loops). */
static void kill_stops_builtin_loops(void **state)
{
    const char *setup = "local n = 200000\n"
                        "t = {} for i = 1, n do t[i] = i end\n"
                        "s = {} for i = 1, n do s[i] = (i * 7919) %% 100003 end\n";
    const char *calls[] = {"kill_then(table.insert, t, 1, 0)", "kill_then(table.remove, t, 1)",
                           "kill_then(table.sort, s)"};
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        char code[512];
        sw_vm *vm;
        int i, sorted = 1;
        snprintf(code, sizeof code, setup);
        strcat(code, calls[k]);
        vm = sw_vm_new(NULL, &owner_token);
        lua_register(sw_vm_lua(vm), "kill_then", t_kill_then);
        assert_int_equal(sw_vm_load(vm, "=t", code, strlen(code), NULL, 0), 0);
        assert_int_equal(drive(vm).st, SW_VM_KILLED);
        if (k == 0) { /* moving up from the end stopped early: t[2] never got t[1] */
            assert_int_equal(global_at(vm, "t", 200001), 200000);
            assert_int_equal(global_at(vm, "t", 2), 2);
        } else if (k == 1) { /* moving down from 1 stopped early: the end is untouched */
            assert_int_equal(global_at(vm, "t", 1), 2);
            assert_int_equal(global_at(vm, "t", 199999), 199999);
        } else {
            for (i = 1; i < 200000 && sorted; i++)
                sorted = global_at(vm, "s", i) <= global_at(vm, "s", i + 1);
            assert_false(sorted);
        }
        sw_vm_free(vm);
    }
}

static int t_refuse(lua_State *L) { return luaL_error(L, "read-only (%s)", lua_tostring(L, 2)); }

/* A proxy marked by sw_vm_readonly_metatable cannot be written, even raw. */
static void readonly_proxies_refuse_raw_writes(void **state)
{
    sw_vm *vm = vm_with("local r = {}\n"
                        "r[1] = select(2, pcall(rawset, mod, 'x', 1))\n"
                        "r[2] = select(2, pcall(rawset, mod, 'f', 2))\n"
                        "r[3] = select(2, pcall(table.insert, mod, 'v'))\n"
                        "r[4] = select(2, pcall(function() mod.f = 3 end))\n"
                        "r[5] = mod.f\n"
                        "r[6] = tostring(rawget(mod, 'f'))\n"
                        "r[7] = tostring(next(mod))\n"
                        "local plain = setmetatable({}, {__newindex = error})\n"
                        "rawset(plain, 'k', 'ok') table.insert(plain, 'ok')\n"
                        "r[8] = plain.k .. plain[1]\n"
                        "return table.concat(r, '|')",
                        NULL);
    lua_State *L = sw_vm_lua(vm);
    run_result r;
    (void)state;
    lua_createtable(L, 0, 1); /* the module */
    lua_pushinteger(L, 1);
    lua_setfield(L, -2, "f");
    lua_newtable(L); /* the proxy */
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, t_refuse);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    sw_vm_readonly_metatable(L, -1);
    lua_setmetatable(L, -2);
    lua_setglobal(L, "mod");
    lua_pop(L, 1);
    r = drive(vm);
    assert_int_equal(r.st, SW_VM_DONE);
    assert_string_equal(
        lua_tostring(sw_vm_thread(vm), -1),
        "read-only (x)|read-only (f)|read-only (1)|t:5: read-only (f)|1|nil|nil|okok");
    sw_vm_free(vm);
}

/* Runs code as a new task of vm (a coroutine of its main state). */
static sw_vm_status run_task(sw_vm *vm, lua_State **co, const char *code)
{
    lua_State *L = sw_vm_lua(vm);
    char err[256];
    *co = lua_newthread(L);
    luaL_ref(L, LUA_REGISTRYINDEX);
    if (sw_vm_load(vm, "=task", code, strlen(code), err, sizeof err) != 0)
        fail_msg("load: %s", err);
    lua_xmove(L, *co, 1);
    sw_vm_status st = sw_vm_run(vm, *co, 0);
    if (st == SW_VM_FAILED) fail_msg("task failed: %s", sw_vm_error(vm));
    return st;
}

/* The values on co's stack as one string, booleans spelled out. */
static void stack_text(lua_State *co, char *buf, size_t size)
{
    int i;
    buf[0] = '\0';
    for (i = 1; i <= lua_gettop(co); i++) {
        const char *v =
            lua_isboolean(co, i) ? (lua_toboolean(co, i) ? "true" : "false") : lua_tostring(co, i);
        strncat(buf, v ? v : "?", size - strlen(buf) - 1);
        strncat(buf, "|", size - strlen(buf) - 1);
    }
}

/* A user coroutine blocked in a host call (inside task a) waits for the scheduler: another
 * task resuming it gets an error instead of forging the call's results; nested too. */
static void blocked_coroutine_only_resumed_by_the_scheduler(void **state)
{
    sw_vm *vm = sw_vm_new(NULL, &owner_token);
    const char *refused = "false|cannot resume a coroutine blocked in a host call|";
    char expected[256], got[256];
    lua_State *a, *b, *c;
    (void)state;
    lua_register(sw_vm_lua(vm), "recv", t_recv);
    assert_int_equal(run_task(vm, &a,
                              "victim = coroutine.create(function() return recv() end)\n"
                              "outer = coroutine.wrap(function()\n"
                              "  inner = coroutine.create(function() return recv() end)\n"
                              "  return coroutine.resume(inner) end)\n"
                              "local x, y = coroutine.resume(victim)\n"
                              "local p, q = outer()\n"
                              "return x, y, p, q"),
                     SW_VM_BLOCKED);
    assert_int_equal(run_task(vm, &b,
                              "local a, b = coroutine.resume(victim, 'forged')\n"
                              "return a, b, coroutine.status(victim)"),
                     SW_VM_DONE);
    stack_text(b, got, sizeof got);
    snprintf(expected, sizeof expected, "%ssuspended|", refused);
    assert_string_equal(got, expected);
    lua_pushinteger(a, 7); /* the scheduler's answer to the first recv */
    assert_int_equal(sw_vm_run(vm, a, 1), SW_VM_BLOCKED); /* now in inner, inside outer */
    assert_int_equal(run_task(vm, &c,
                              "local c, d = coroutine.resume(inner, 'forged')\n"
                              "local e, f = pcall(outer, 'forged')\n"
                              "return c, d, e, f"),
                     SW_VM_DONE);
    stack_text(c, got, sizeof got);
    snprintf(expected, sizeof expected, "%s%s", refused, refused);
    assert_string_equal(got, expected);
    lua_pushinteger(a, 8); /* the answer to the second */
    assert_int_equal(sw_vm_run(vm, a, 1), SW_VM_DONE);
    assert_int_equal(lua_gettop(a), 4);
    assert_true(lua_toboolean(a, 1) && lua_tointeger(a, 2) == 7);
    assert_true(lua_toboolean(a, 3) && lua_tointeger(a, 4) == 8);
    sw_vm_free(vm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_inside_a_budget),
        cmocka_unit_test(s1_no_dangerous_modules),
        cmocka_unit_test(s2_binary_chunks_refused),
        cmocka_unit_test(s3_string_metatable_protected),
        cmocka_unit_test(s4_no_environment_functions),
        cmocka_unit_test(globals_are_an_allow_list),
        cmocka_unit_test(s9_collectgarbage_only_count),
        cmocka_unit_test(s11_processes_do_not_share_string),
        cmocka_unit_test(s13_error_tostring_never_called),
        cmocka_unit_test(xpcall_and_load_behave),
        cmocka_unit_test(failure_has_traceback),
        cmocka_unit_test(load_reports_syntax_errors),
        cmocka_unit_test(print_writes_one_line),
        cmocka_unit_test(owner_visible_from_coroutines),
        cmocka_unit_test(lazy_globals),
        cmocka_unit_test(lazy_builtins),
        cmocka_unit_test(s5_plain_loop_is_preempted),
        cmocka_unit_test(preempted_inside_pcall_and_metamethods),
        cmocka_unit_test(no_preemption_where_yield_is_impossible),
        cmocka_unit_test(passthrough_nested_coroutines),
        cmocka_unit_test(s7_style_loop_in_coroutine_returns_values),
        cmocka_unit_test(root_coroutine_is_not_visible),
        cmocka_unit_test(user_yield_at_top_fails),
        cmocka_unit_test(root_is_not_yieldable),
        cmocka_unit_test(deep_coroutine_nesting_is_an_error),
        cmocka_unit_test(c_callback_recursion_is_an_error),
        cmocka_unit_test(block_at_top_level),
        cmocka_unit_test(block_passes_through_coroutines),
        cmocka_unit_test(resume_with_many_values),
        cmocka_unit_test(block_in_a_c_callback_is_an_error),
        cmocka_unit_test(blocked_vm_freed_without_resume),
        cmocka_unit_test(misuse_of_start_and_resume),
        cmocka_unit_test(s5_kill_infinite_loop),
        cmocka_unit_test(s6_kill_through_pcall),
        cmocka_unit_test(kill_through_handlers_and_readers),
        cmocka_unit_test(s7_kill_through_coroutine_resume),
        cmocka_unit_test(kill_inside_sort_comparator),
        cmocka_unit_test(kill_before_running),
        cmocka_unit_test(s8_memory_limit),
        cmocka_unit_test(live_data_near_the_limit_survives_garbage),
        cmocka_unit_test(memory_is_counted),
        cmocka_unit_test(jit_mode_runs),
        cmocka_unit_test(interrupt_preempts_without_count_hook),
        cmocka_unit_test(s14_catastrophic_pattern),
        cmocka_unit_test(matcher_agrees_with_luajit),
        cmocka_unit_test(coroutines_agree_with_luajit),
        cmocka_unit_test(builtins_agree_with_luajit),
        cmocka_unit_test(insert_and_remove_check_positions),
        cmocka_unit_test(kill_stops_builtin_loops),
        cmocka_unit_test(readonly_proxies_refuse_raw_writes),
        cmocka_unit_test(blocked_coroutine_only_resumed_by_the_scheduler),
    };
    alarm(300); /* a kill that never lands must fail the run, not hang it */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
