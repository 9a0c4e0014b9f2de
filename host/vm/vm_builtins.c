/* The sandbox's own versions of a few LuaJIT builtins (vm_sandbox.c installs them; the
 * audit of every builtin's loops is docs/sandbox-builtins.md):
 * - tostring and string.sub/upper/lower/reverse/char as plain C functions, in every process
 *   (any may hit its memory limit or the host's cap): LuaJIT's are fast functions that call into C without setting L->top,
 *   so an allocation failing inside one wrote "not enough memory" over a live stack slot and
 *   the host crashed (docs/sandbox-builtins.md);
 * - table.insert and table.remove with Lua 5.3's position checks; long moves in insert and
 *   table.sort poll the kill flag (C loops where no hook fires);
 * - rawset and table.insert refusing the read-only proxies of host modules.
 * Results are LuaJIT's (2.1, x86-64), checked against it in spec/c/test_vm.c. */
#include "vm_internal.h"

#include <stdint.h>

#include <lauxlib.h>

#define POLL_MASK    4095 /* loop iterations between looks at the kill flag */
#define SMALL_STRING 256  /* results up to this size are built on the C stack */

/* ---- argument conversions, as LuaJIT's lj_lib_* --------------------------------------- */

/* An integer argument as lj_lib_checkint reads it (and LuaJIT's assembler fast paths): a
 * number or numeric string, truncated toward zero; out of the int32 range (or NaN) it is
 * INT32_MIN, what x86-64's cvttsd2si gives. */
static int32_t arg_int(lua_State *L, int idx)
{
    lua_Number n = luaL_checknumber(L, idx);
    return n > -2147483649.0 && n < 2147483648.0 ? (int32_t)n : INT32_MIN;
}

/* Looks at the kill flag every POLL_MASK + 1 calls; raises the kill (or memory) error. */
static inline void poll_kill(lua_State *L, uint32_t *n)
{
    if ((++*n & POLL_MASK) == 0) {
        sw_vm *vm = sw_vm_of(L);
        if (vm_dying(vm)) vm_die(vm, L);
    }
}

/* ---- tostring and string functions: plain C, for every process (any may hit a memory cap) --------------
 * Why C functions and not a reserve past the limit: a C function is entered through a frame
 * that sets L->top, so an allocation failing anywhere inside it (the result, LuaJIT's string
 * table growing, a buffer) raises cleanly; a reserve would have to cover a string as large
 * as the process's largest (sub, upper) and the string table's doubling. Only processes
 * with limits.memory get these: without a limit an allocation fails only when malloc does,
 * and a process can exhaust the host's memory anyway. They cost a C call and API calls:
 * tostring(i) ~8%, s:sub(i, i) ~40% more than the fast paths (docs/sandbox-builtins.md has
 * the figures). */

/* tostring: numbers and strings here (lj_strfmt_number, as LuaJIT's fast path); anything
 * else through LuaJIT's own tostring (upvalue 1), called with the same arguments: its
 * __tostring then runs as a C callback (killable, not preemptible, cannot block). */
static int sb_tostring(lua_State *L)
{
    int t = lua_type(L, 1);
    if (t == LUA_TNUMBER || t == LUA_TSTRING) {
        lua_settop(L, 1);
        lua_tolstring(L, 1, NULL); /* a number is converted in place */
        return 1;
    }
    luaL_checkany(L, 1);
    vm_cstack_check(L); /* a __tostring may call tostring */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* string.sub(s, i [, j]): LuaJIT's range rules (negative from the end, clamped). */
static int sb_sub(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int64_t start = arg_int(L, 2), end = lua_isnoneornil(L, 3) ? -1 : arg_int(L, 3);
    int64_t n = (int64_t)len;
    if (end < 0) end += n + 1;
    else if (end > n) end = n;
    if (start < 0) start += n + 1;
    if (start < 1) start = 1;
    if (start > end) lua_pushliteral(L, "");
    else lua_pushlstring(L, s + start - 1, (size_t)(end - start + 1));
    return 1;
}

/* Room for a result of len bytes: small on the C stack, else a scratch userdata (counted
 * against the limit, as LuaJIT's own temporary buffer is). */
static char *scratch(lua_State *L, char *small, size_t len)
{
    return len <= SMALL_STRING ? small : lua_newuserdata(L, len);
}

enum { MAP_UPPER, MAP_LOWER, MAP_REVERSE };

/* upper and lower change ASCII letters only, whatever the locale (as LuaJIT). */
static int map_string(lua_State *L, int op)
{
    size_t len, i;
    const char *s = luaL_checklstring(L, 1, &len);
    char small[SMALL_STRING], *out = scratch(L, small, len);
    for (i = 0; i < len; i++) {
        unsigned c = (unsigned char)s[i];
        if (op == MAP_UPPER) out[i] = (char)(c - 'a' < 26u ? c ^ 0x20 : c);
        else if (op == MAP_LOWER) out[i] = (char)(c - 'A' < 26u ? c ^ 0x20 : c);
        else out[len - 1 - i] = (char)c;
    }
    lua_pushlstring(L, out, len);
    return 1;
}

static int sb_upper(lua_State *L) { return map_string(L, MAP_UPPER); }
static int sb_lower(lua_State *L) { return map_string(L, MAP_LOWER); }
static int sb_reverse(lua_State *L) { return map_string(L, MAP_REVERSE); }

/* string.char(...): each argument an integer 0..255 ("invalid value" otherwise). */
static int sb_char(lua_State *L)
{
    int n = lua_gettop(L), i;
    char small[SMALL_STRING], *out = scratch(L, small, (size_t)n);
    for (i = 1; i <= n; i++) {
        int32_t c = arg_int(L, i);
        luaL_argcheck(L, c == (uint8_t)c, i, "invalid value");
        out[i - 1] = (char)c;
    }
    lua_pushlstring(L, out, (size_t)n);
    return 1;
}

static const luaL_Reg string_guarded[] = {{"sub", sb_sub},     {"upper", sb_upper},
                                          {"lower", sb_lower}, {"reverse", sb_reverse},
                                          {"char", sb_char},   {NULL, NULL}};

void vm_builtins_alloc_safe(lua_State *L)
{
    lua_getglobal(L, "tostring");
    lua_pushcclosure(L, sb_tostring, 1);
    lua_setglobal(L, "tostring");
    lua_getglobal(L, "string");
    luaL_register(L, NULL, string_guarded);
    lua_pop(L, 1);
}

/* ---- read-only proxies ---------------------------------------------------------------- */

static const char readonly_key = 0; /* its address marks a read-only proxy's metatable */

void sw_vm_readonly_metatable(lua_State *L, int idx)
{
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_pushlightuserdata(L, (void *)&readonly_key);
    lua_pushboolean(L, 1);
    lua_rawset(L, idx);
}

void sw_vm_readonly_proxy(lua_State *L, lua_CFunction newindex)
{
    lua_newtable(L);          /* proxy */
    lua_createtable(L, 0, 4); /* its metatable */
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    sw_vm_readonly_metatable(L, -1); /* rawset and table.insert refuse the proxy too */
    lua_setmetatable(L, -2);
    lua_replace(L, -2);
}

/* Whether the table at idx is a read-only proxy: a look at its metatable, if it has one.
 * A proxy is always empty, so table.insert asks only about empty tables. */
static int readonly(lua_State *L, int idx)
{
    int ro = 0;
    if (lua_getmetatable(L, idx)) {
        lua_pushlightuserdata(L, (void *)&readonly_key);
        lua_rawget(L, -2);
        ro = lua_toboolean(L, -1);
        lua_pop(L, 2);
    }
    return ro;
}

/* rawset(t, k, v), except that on a read-only proxy it assigns through __newindex, which
 * refuses: raw writes would otherwise add fields to the proxy (the proxy is empty, so every
 * key goes to __newindex). */
static int sb_rawset(lua_State *L)
{
    if (lua_gettop(L) != 3 || lua_type(L, 1) != LUA_TTABLE) { /* LuaJIT's checks */
        luaL_checktype(L, 1, LUA_TTABLE);
        luaL_checkany(L, 2);
        luaL_checkany(L, 3);
        lua_settop(L, 3);
    }
    if (readonly(L, 1)) lua_settable(L, 1);
    else lua_rawset(L, 1);
    return 1;
}

void vm_builtins_base(lua_State *L)
{
    lua_pushcfunction(L, sb_rawset);
    lua_setglobal(L, "rawset");
}

/* ---- table.insert, table.remove, table.sort -------------------------------------------- */

/* table.insert(t, [pos,] v): LuaJIT's (raw writes; pos truncated to an integer), plus Lua
 * 5.3's check that 1 <= pos <= #t + 1: LuaJIT moved elements one by one from #t + 1 down to
 * any pos, so a position like 2^40 (INT32_MIN once converted) ran a C loop of 2^31 steps.
 * Within bounds the moves are made here (through the API, ~3 ns each) up to MOVES_OWN, by
 * LuaJIT's own insert (upvalue 1: ~1 ns each, ~25 ns to call) up to MOVES_UNPOLLED, and here
 * again beyond (a table of over 1 MB), polling the kill flag. */
#define MOVES_OWN      8
#define MOVES_UNPOLLED (1 << 16)

static int sb_insert(lua_State *L)
{
    int nargs = lua_gettop(L);
    int64_t e, pos, i;
    uint32_t polled = 0;
    if (nargs == 2 && lua_type(L, 1) == LUA_TTABLE) { /* append: the usual */
        size_t n = lua_objlen(L, 1);
        if (n > 0 || !readonly(L, 1)) { /* a read-only proxy is always empty */
            lua_rawseti(L, 1, (int)n + 1);
            return 0;
        }
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    e = (int64_t)lua_objlen(L, 1) + 1;
    pos = e;
    if (nargs != 2) {
        if (nargs != 3) return luaL_error(L, "wrong number of arguments to 'insert'");
        pos = arg_int(L, 2);
        luaL_argcheck(L, pos >= 1 && pos <= e, 2, "position out of bounds");
    }
    if (e == 1 && readonly(L, 1)) { /* refused by __newindex */
        lua_pushinteger(L, (lua_Integer)pos);
        lua_pushvalue(L, nargs);
        lua_settable(L, 1);
        return 0;
    }
    if (e - pos > MOVES_OWN && e - pos <= MOVES_UNPOLLED) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, nargs, 0);
        return 0;
    }
    for (i = e; i > pos; i--) {
        lua_rawgeti(L, 1, (int)(i - 1));
        lua_rawseti(L, 1, (int)i);
        poll_kill(L, &polled);
    }
    lua_pushvalue(L, nargs);
    lua_rawseti(L, 1, (int)pos);
    return 0;
}

/* table.remove(t [, pos]): LuaJIT's, plus Lua 5.3's check that pos is #t or within
 * 1..#t + 1 (LuaJIT returned nothing for any other position). The pop is made here (LuaJIT's
 * raw accesses); a position goes to LuaJIT's own remove (upvalue 1), whose loop is bytecode:
 * at most #t moves, and killable. Argument errors are raised here, as a Lua function's: a
 * missing argument is nil. */
static int sb_remove(lua_State *L)
{
    lua_Number pos;
    int32_t n;
    if (lua_type(L, 1) == LUA_TTABLE && lua_type(L, 2) <= LUA_TNIL) { /* none or nil: pop */
        n = (int32_t)lua_objlen(L, 1);
        if (n == 0) return 0;
        lua_rawgeti(L, 1, n);
        lua_pushnil(L);
        lua_rawseti(L, 1, n);
        return 1;
    }
    lua_settop(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (int32_t)lua_objlen(L, 1);
    pos = luaL_checknumber(L, 2);
    luaL_argcheck(L, pos == n || (pos >= 1 && pos <= (lua_Number)n + 1), 2,
                  "position out of bounds");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L);
}

/* table.sort: LuaJIT's algorithm (Lua 5.1's quicksort, median of three; the same
 * comparisons in the same order, so the same result for any comparator), polling the kill
 * flag between comparisons: without a comparator no Lua code runs, so no hook could stop a
 * long sort. Quadratic on crafted input, like LuaJIT's: killable, not preemptible. */
typedef struct sorter {
    lua_State *L;
    int has_cmp;
    uint32_t polled;
} sorter;

static int sort_less(sorter *s, int a, int b)
{
    lua_State *L = s->L;
    int res;
    poll_kill(L, &s->polled);
    if (!s->has_cmp) return lua_lessthan(L, a, b);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a - 1); /* -1 for the function */
    lua_pushvalue(L, b - 2); /* -2 for the function and a */
    lua_call(L, 2, 1);
    res = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return res;
}

/* t[i] = top value, t[j] = the one below it; pops both. */
static void sort_set2(lua_State *L, int i, int j)
{
    lua_rawseti(L, 1, i);
    lua_rawseti(L, 1, j);
}

static void sort_range(sorter *s, int l, int u)
{
    lua_State *L = s->L;
    while (l < u) { /* a loop for the larger part, recursion for the smaller */
        int i, j;
        lua_rawgeti(L, 1, l);
        lua_rawgeti(L, 1, u);
        if (sort_less(s, -1, -2)) /* a[u] < a[l]? */
            sort_set2(L, l, u);
        else lua_pop(L, 2);
        if (u - l == 1) break;
        i = (l + u) / 2;
        lua_rawgeti(L, 1, i);
        lua_rawgeti(L, 1, l);
        if (sort_less(s, -2, -1)) { /* a[i] < a[l]? */
            sort_set2(L, i, l);
        } else {
            lua_pop(L, 1);
            lua_rawgeti(L, 1, u);
            if (sort_less(s, -1, -2)) /* a[u] < a[i]? */
                sort_set2(L, i, u);
            else lua_pop(L, 2);
        }
        if (u - l == 2) break;
        lua_rawgeti(L, 1, i); /* the pivot P */
        lua_pushvalue(L, -1);
        lua_rawgeti(L, 1, u - 1);
        sort_set2(L, i, u - 1); /* a[l] <= P == a[u-1] <= a[u]: sort l+1 .. u-2 */
        i = l;
        j = u - 1;
        for (;;) {
            while (lua_rawgeti(L, 1, ++i), sort_less(s, -1, -2)) { /* until a[i] >= P */
                if (i > u) luaL_error(L, "invalid order function for sorting");
                lua_pop(L, 1);
            }
            while (lua_rawgeti(L, 1, --j), sort_less(s, -3, -1)) { /* until a[j] <= P */
                if (j < l) luaL_error(L, "invalid order function for sorting");
                lua_pop(L, 1);
            }
            if (j < i) {
                lua_pop(L, 3);
                break;
            }
            sort_set2(L, i, j);
        }
        lua_rawgeti(L, 1, u - 1);
        lua_rawgeti(L, 1, i);
        sort_set2(L, u - 1, i); /* a[l..i-1] <= a[i] == P <= a[i+1..u] */
        if (i - l < u - i) {
            j = l;
            i = i - 1;
            l = i + 2;
        } else {
            j = i + 1;
            i = u;
            u = j - 2;
        }
        sort_range(s, j, i);
    }
}

static int sb_sort(lua_State *L)
{
    sorter s = {L, 0, 0};
    int n;
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (int)lua_objlen(L, 1);
    lua_settop(L, 2);
    if (!lua_isnil(L, 2)) {
        luaL_checktype(L, 2, LUA_TFUNCTION);
        s.has_cmp = 1;
    }
    vm_cstack_check(L); /* a comparator may sort again */
    sort_range(&s, 1, n);
    return 0;
}

void vm_builtins_table(lua_State *L, int t)
{
    lua_getfield(L, t, "insert");
    lua_pushcclosure(L, sb_insert, 1);
    lua_setfield(L, t, "insert");
    lua_getfield(L, t, "remove");
    lua_pushcclosure(L, sb_remove, 1);
    lua_setfield(L, t, "remove");
    lua_pushcfunction(L, sb_sort);
    lua_setfield(L, t, "sort");
}
