/* The globals process code sees (vm.h lists them; docs/lua-api.md describes them for users):
 * allow-lists of base, string, table, math, bit and coroutine, the lazily opened libraries,
 * and the sandbox's own load/loadstring, print, collectgarbage and guarded xpcall.
 * vm.c calls vm_sandbox_open once per state; the pattern functions are vm_pattern.c's, the
 * coroutine pass-through vm_coroutine.c's, rawset, table.insert/remove/sort, tostring and the
 * allocating string functions vm_builtins.c's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vm_internal.h"
#include "random.h"
#include "vm_pattern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#define N_BUILTIN_LAZY  7
/* vm->opened: bits 0..6 the lazy libraries below, then the host's (up to 32), then this. */
#define BUILTINS_OPENED ((uint64_t)1 << 63)

static void open_builtins(lua_State *L);
static void need_builtins(lua_State *L);
static int lazy_newindex(lua_State *L);

/* Allow-lists, each sorted for listed(). */
static const char *const base_allowed[] = {
    "_G",     "_VERSION",     "assert", "error",    "getmetatable", "ipairs",
    "next",   "pairs",        "pcall",  "rawequal", "rawget",       "rawset",
    "select", "setmetatable", "string", "tonumber", "tostring",     "type",
    "unpack", "xpcall",       NULL}; /* xpcall is then wrapped */
static const char *const string_allowed[] = {"byte",    "char", "find",  "format", "gmatch",
                                             "gsub",    "len",  "lower", "match",  "rep",
                                             "reverse", "sub",  "upper", NULL};
static const char *const table_allowed[] = {"concat", "foreach", "foreachi", "getn", "insert",
                                            "maxn",   "move",    "remove",   "sort", NULL};
static const char *const math_allowed[] = {
    "abs",        "acos", "asin",  "atan", "atan2", "ceil", "cos",   "cosh",
    "deg",        "exp",  "floor", "fmod", "frexp", "huge", "ldexp", "log",
    "log10",      "max",  "min",   "modf", "pi",    "pow",  "rad",   "random",
    "randomseed", "sin",  "sinh",  "sqrt", "tan",   "tanh", NULL};
static const char *const bit_allowed[] = {"arshift", "band",   "bnot", "bor", "bswap",
                                          "bxor",    "lshift", "rol",  "ror", "rshift",
                                          "tobit",   "tohex",  NULL};
static const char *const coroutine_allowed[] = {"create", "isyieldable", "resume", "running",
                                                "status", "wrap",        "yield",  NULL};

/* names is sorted (strcmp order) and NULL-terminated. */
static int listed(const char *const *names, const char *s)
{
    size_t lo = 0, hi = 0;
    while (names[hi]) hi++;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s, names[mid]);
        if (c == 0) return 1;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return 0;
}

/* Once per program (immutable afterwards, shared by all vms, freed never): the names
 * luaopen_base and luaopen_string add beyond the allow-lists. Each process then clears just
 * those instead of walking its tables (a quarter of sw_vm_new's time). If preparing fails
 * (no memory), every process falls back to walking them. */
#define MAX_REMOVALS 64
typedef struct removals {
    int n; /* -1: unknown, walk the table */
    char *names[MAX_REMOVALS];
} removals;
static removals base_removals = {-1, {0}}, string_removals = {-1, {0}};
static once_flag prepared = ONCE_FLAG_INIT;

/* Globals the sandbox sets beside base_allowed (vm_sandbox_open's builtins). Sorted. */
static const char *const sandbox_added[] = {"collectgarbage", "getfenv", "load", "loadstring",
                                            "print",          "setfenv", NULL};

/* A global name the builtins group defines or clears as it opens (open_builtins): reading
 * or assigning one first must open the group, or the process would see the difference. */
static int builtin_name(const char *k)
{
    if (base_removals.n < 0) return 1; /* not known: any name opens it */
    if (listed(base_allowed, k) || listed(sandbox_added, k)) return 1;
    for (int i = 0; i < base_removals.n; i++)
        if (strcmp(base_removals.names[i], k) == 0) return 1;
    return 0;
}

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

static void find_removals(lua_State *L, int idx, const char *const *allowed, removals *out)
{
    int n = 0, ok = 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || n == MAX_REMOVALS) ok = 0;
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
    return 0;
}

static void prepare(void)
{
    lua_State *L;
    sw_pattern_prepare();
    L = lua_newstate(plain_alloc, NULL);
    if (L && lua_cpcall(L, prepare_in, NULL) != 0) base_removals.n = string_removals.n = -1;
    if (L) lua_close(L);
}

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

/* load with a reader function streams it as LuaJIT's load does: the parser asks for a piece
 * when it needs one, so a reader is not drained past a syntax error. Each call of the reader
 * runs under lua_pcall, which restores the hook state: LuaJIT's own load calls the reader in
 * an internal protected call that does not, so a kill raised by the hook inside a reader left
 * every hook off for good. A reader error ends the stream and is what load returns. */
#define LOAD_MAX_BYTES ((size_t)64 << 20)

typedef struct reader_state {
    size_t total;
    bool first, binary, failed; /* failed: the error message is in slot 5 */
} reader_state;

static const char *stream_piece(lua_State *L, void *ud, size_t *size)
{
    reader_state *r = ud;
    *size = 0;
    if (r->failed || r->binary) return NULL;
    luaL_checkstack(L, 2, "too many nested functions");
    lua_pushvalue(L, 1);
    bool raised = lua_pcall(L, 0, 1, 0) != 0;
    if (raised || (!lua_isnil(L, -1) && !lua_isstring(L, -1))) {
        if (!raised) { /* the value, not an error: LuaJIT's message, at load's caller */
            lua_pop(L, 1);
            luaL_where(L, 1);
            lua_pushliteral(L, "reader function must return a string");
            lua_concat(L, 2);
        }
        r->failed = true;
        lua_replace(L, 5);
        return NULL;
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_replace(L, 5); /* anchored until the next call, as LuaJIT's reader does */
    const char *s = lua_tolstring(L, 5, size);
    if (r->first && *size > 0) {
        r->first = false;
        if (s[0] == '\033') r->binary = true;
    }
    if (r->binary || (r->total += *size) > LOAD_MAX_BYTES) {
        if (!r->binary) {
            lua_pushliteral(L, "chunk too large (over 64 MB from the reader)");
            lua_replace(L, 5);
            r->failed = true;
        }
        *size = 0;
        return NULL;
    }
    return s;
}

/* Pushes the function loaded from the reader at index 1, or returns non-0 with the error
 * message on top. */
static int load_stream(lua_State *L, const char *name)
{
    reader_state r = {.first = true};
    lua_settop(L, 5);
    int rc = lua_load(L, stream_piece, &r, name);
    if (vm_dying(sw_vm_of(L))) lua_error(L); /* a kill is not the reader's error to report */
    if (r.binary) {
        if (rc == 0) lua_pop(L, 1);
        lua_pushliteral(L, "attempt to load a binary chunk (binary chunks are not allowed)");
        return 1;
    }
    if (r.failed) {
        if (rc == 0) lua_pop(L, 1);
        lua_pushvalue(L, 5);
        return 1;
    }
    return rc;
}

/* load(chunk [, chunkname [, mode [, env]]]) and loadstring: text only, whatever mode says
 * (a binary chunk would let the process forge bytecode). */
static int sb_load(lua_State *L)
{
    size_t len;
    const char *s, *name;
    lua_settop(L, 4);
    vm_cstack_check(L);
    if (lua_type(L, 1) == LUA_TFUNCTION) {
        if (load_stream(L, luaL_optstring(L, 2, "=(load)")) != 0) return load_refused(L, -1);
    } else {
        s = luaL_checklstring(L, 1, &len);
        name = luaL_optstring(L, 2, s);
        if (len > 0 && s[0] == '\033') {
            lua_pushliteral(L, "attempt to load a binary chunk (binary chunks are not allowed)");
            return load_refused(L, -1);
        }
        if (luaL_loadbufferx(L, s, len, name, "t") != 0) return load_refused(L, -1);
    }
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
    if (vm_dying(sw_vm_of(L))) return 1;
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

/* Replaces the global xpcall by the guarded one (lua/xpcall.lua: checks the handler, then
 * calls the raw xpcall with guard(handler)). */
static void sandbox_xpcall(lua_State *L)
{
    vm_load_shipped(L, "xpcall", "=[xpcall]");
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

/* print: tab-separated tostring of the arguments, written as one line with one write(2) so
 * lines of processes on different threads never interleave. */
static int sb_print(lua_State *L)
{
    int n = lua_gettop(L), i;
    size_t len;
    const char *line;
    luaL_Buffer b;
    vm_cstack_check(L);
    lua_getglobal(L, "tostring");
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\t');
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
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        line += w;
        len -= (size_t)w;
    }
    return 0;
}

static const luaL_Reg string_safe[] = {{"find", sw_pattern_find},
                                       {"match", sw_pattern_match},
                                       {"gmatch", sw_pattern_gmatch},
                                       {"gsub", sw_pattern_gsub},
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

/* table: insert, remove and sort are vm_builtins.c's. */
static int open_table(lua_State *L)
{
    open_lib(L, luaopen_table, table_allowed);
    vm_builtins_table(L, lua_gettop(L));
    return 1;
}
/* math, with its generator seeded from the OS: two processes (or two runs) never share a
 * sequence; math.randomseed(n) still makes a process deterministic. */
static int open_math(lua_State *L)
{
    open_lib(L, luaopen_math, math_allowed);
    lua_getfield(L, -1, "randomseed");
    lua_pushnumber(L, (lua_Number)(sw_random_u64() >> 11)); /* 53 bits: exact as a double */
    lua_call(L, 1, 0);
    return 1;
}
static int open_bit(lua_State *L) { return open_lib(L, luaopen_bit, bit_allowed); }

/* coroutine: made by luaopen_base and kept out of _G until now; the wrapper chunk is loaded
 * only here, on first use. */
static int open_coroutine(lua_State *L)
{
    int t;
    need_builtins(L); /* luaopen_base makes it */
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    lua_getfield(L, -1, "coroutine");
    t = lua_gettop(L);
    keep_only(L, t, coroutine_allowed);
    vm_coroutine_bind(L, t);
    return 1;
}

/* Opened on first use. */
static const sw_vm_lib builtin_lazy[N_BUILTIN_LAZY] = {
    {"table", open_table},         {"math", open_math},  {"bit", open_bit},
    {"coroutine", open_coroutine}, {"os", vm_compat_os}, {"debug", vm_compat_debug},
    {"jit", vm_compat_jit}};

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
    if (!k) return 0;
    if (!(vm->opened & BUILTINS_OPENED) && builtin_name(k)) {
        open_builtins(L);
        lua_pushvalue(L, 2);
        lua_rawget(L, LUA_GLOBALSINDEX);
        if (!lua_isnil(L, -1)) return 1;
        lua_pop(L, 1); /* a name it cleared, like coroutine: maybe a lazy one */
    }
    for (i = 0; i < N_BUILTIN_LAZY; i++)
        if (!(vm->opened >> i & 1) && strcmp(builtin_lazy[i].name, k) == 0) b = i;
    for (i = 0; vm->libs && vm->libs[i].name && i < 32; i++)
        if (!(vm->opened >> (N_BUILTIN_LAZY + i) & 1) && strcmp(vm->libs[i].name, k) == 0)
            host = &vm->libs[i];
    if (b < 0 && !host) return 0;
    if (b >= 0) vm->opened |= (uint64_t)1 << b;
    if (host) vm->opened |= (uint64_t)1 << (N_BUILTIN_LAZY + (host - vm->libs));
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
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, lazy_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lazy_newindex);
    lua_setfield(L, -2, "__newindex");
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

/* The builtins group: base and string, allow-listed, with the sandbox's own functions.
 * Opened on first need (lazy_index, lazy_newindex, lazy_string_index) rather than at spawn:
 * it is a third of a fresh state's memory and most of what spawning costs, and an idle
 * process (one waiting in receive) never reads any of it. Opening it changes nothing a
 * process can observe: every way to see a global goes through one of its names, a string's
 * metatable, or an assignment, and each opens it first. */
static void open_builtins(lua_State *L)
{
    sw_vm *vm = sw_vm_of(L);
    vm->opened |= BUILTINS_OPENED;
    lua_getmetatable(L, LUA_GLOBALSINDEX); /* assignments need no more watching */
    lua_pushnil(L);
    lua_setfield(L, -2, "__newindex");
    lua_pop(L, 1);
    call_open(L, luaopen_base);
    call_open(L, luaopen_string);
    sandbox_base(L);
    vm_builtins_base(L);
    sandbox_xpcall(L);
    vm_compat_base(L);
    lua_pushcfunction(L, sb_load);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "load");
    lua_setglobal(L, "loadstring");
    lua_pushcfunction(L, sb_collectgarbage);
    lua_setglobal(L, "collectgarbage");
    lua_pushcfunction(L, sb_print);
    lua_setglobal(L, "print");
    sandbox_string(L);
    vm_builtins_alloc_safe(L);
}

static void need_builtins(lua_State *L)
{
    if (!(sw_vm_of(L)->opened & BUILTINS_OPENED)) open_builtins(L);
}

/* __newindex of the globals until the builtins are open: assigning one of their names
 * (even nil) opens them first, so the assignment is not undone by opening them later. */
static int lazy_newindex(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING && builtin_name(lua_tostring(L, 2))) need_builtins(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 0;
}

/* __index of strings until the builtins are open (luaopen_string then installs the real
 * metatable): ("x"):upper() opens them and indexes again. */
static int lazy_string_index(lua_State *L)
{
    if (sw_vm_of(L)->opened & BUILTINS_OPENED) return 0; /* opening failed half way (memory) */
    open_builtins(L);
    lua_settop(L, 2);
    lua_gettable(L, 1);
    return 1;
}

void vm_sandbox_open(lua_State *L)
{
    call_once(&prepared, prepare);
    sandbox_lazy(L);
    lua_pushliteral(L, "");
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, lazy_string_index);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

void vm_sandbox_jit(lua_State *L)
{
    call_open(L, luaopen_jit);
    jit_hide(L);
}
