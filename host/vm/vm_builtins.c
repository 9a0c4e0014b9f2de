/* The sandbox's own versions of a few LuaJIT builtins (vm_sandbox.c installs them):
 * - tostring and string.sub/upper/lower/reverse/char as plain C functions, in processes with
 *   a memory limit: LuaJIT's are fast functions that call into C without setting L->top,
 *   so an allocation failing inside one wrote "not enough memory" over a live stack slot and
 *   the host crashed (shared/research/oom-in-fast-functions.md).
 * Results are LuaJIT's (2.1, x86-64), checked against it in spec/c/test_vm.c. */
#include "vm_internal.h"

#include <stdint.h>

#include <lauxlib.h>

#define SMALL_STRING 256 /* results up to this size are built on the C stack */

/* ---- argument conversions, as LuaJIT's lj_lib_* --------------------------------------- */

/* An integer argument as lj_lib_checkint reads it (and LuaJIT's assembler fast paths): a
 * number or numeric string, truncated toward zero; out of the int32 range (or NaN) it is
 * INT32_MIN, what x86-64's cvttsd2si gives. */
static int32_t arg_int(lua_State *L, int idx)
{
    lua_Number n = luaL_checknumber(L, idx);
    return n > -2147483649.0 && n < 2147483648.0 ? (int32_t)n : INT32_MIN;
}

/* ---- tostring and string functions: plain C, for memory-limited processes --------------
 * Why C functions and not a reserve past the limit: a C function is entered through a frame
 * that sets L->top, so an allocation failing anywhere inside it (the result, LuaJIT's string
 * table growing, a buffer) raises cleanly; a reserve would have to cover a string as large
 * as the process's largest (sub, upper) and the string table's doubling. Only processes
 * with limits.memory get these: without a limit an allocation fails only when malloc does,
 * and a process can exhaust the host's memory anyway. They cost a C call and API calls:
 * tostring(i) ~8%, s:sub(i, i) ~40% more than the fast paths. */

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
    if (end < 0)
        end += n + 1;
    else if (end > n)
        end = n;
    if (start < 0)
        start += n + 1;
    if (start < 1)
        start = 1;
    if (start > end)
        lua_pushliteral(L, "");
    else
        lua_pushlstring(L, s + start - 1, (size_t)(end - start + 1));
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
        if (op == MAP_UPPER)
            out[i] = (char)(c - 'a' < 26u ? c ^ 0x20 : c);
        else if (op == MAP_LOWER)
            out[i] = (char)(c - 'A' < 26u ? c ^ 0x20 : c);
        else
            out[len - 1 - i] = (char)c;
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

static const luaL_Reg string_guarded[] = {
    {"sub", sb_sub}, {"upper", sb_upper}, {"lower", sb_lower}, {"reverse", sb_reverse},
    {"char", sb_char}, {NULL, NULL}};

void vm_builtins_alloc_safe(lua_State *L)
{
    lua_getglobal(L, "tostring");
    lua_pushcclosure(L, sb_tostring, 1);
    lua_setglobal(L, "tostring");
    lua_getglobal(L, "string");
    luaL_register(L, NULL, string_guarded);
    lua_pop(L, 1);
}
