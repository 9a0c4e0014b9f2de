/* Shared by the message codec fuzzers: a failed check aborts (libFuzzer reports it as a crash
 * with the input), and deep equality of two values in two lua_States (raw access only, as
 * the codec). Static functions: each fuzzer is one translation unit. */
#ifndef STEWARD_FUZZ_LUA_H
#define STEWARD_FUZZ_LUA_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* An unprotected Lua error is a bug in the code under test (or in the fuzzer): crash on it. */
static int fuzz_panic(lua_State *L)
{
    fprintf(stderr, "lua panic: %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    abort();
}

static lua_State *fuzz_new_state(void)
{
    lua_State *L = luaL_newstate();
    FUZZ_CHECK(L != NULL, "luaL_newstate");
    lua_atpanic(L, fuzz_panic);
    return L;
}

/* Whether the value at ia in A equals the value at ib in B: same type; numbers equal with the
 * sign of zero, or both NaN; strings byte for byte; tables with the same keys, each mapping to
 * an equal value (recursively: a DAG compares as the tree it unfolds to; no cycles). */
static int fuzz_same(lua_State *A, int ia, lua_State *B, int ib)
{
    ia = ia < 0 ? lua_gettop(A) + ia + 1 : ia;
    ib = ib < 0 ? lua_gettop(B) + ib + 1 : ib;
    int t = lua_type(A, ia);
    if (t != lua_type(B, ib)) return 0;
    size_t na, nb;
    const char *sa, *sb;
    switch (t) {
    case LUA_TNIL: return 1;
    case LUA_TBOOLEAN: return lua_toboolean(A, ia) == lua_toboolean(B, ib);
    case LUA_TNUMBER: {
        double x = lua_tonumber(A, ia), y = lua_tonumber(B, ib);
        return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
    }
    case LUA_TSTRING:
        sa = lua_tolstring(A, ia, &na);
        sb = lua_tolstring(B, ib, &nb);
        return na == nb && memcmp(sa, sb, na) == 0;
    case LUA_TTABLE: break;
    default: return 0;
    }
    FUZZ_CHECK(lua_checkstack(A, 4) && lua_checkstack(B, 4), "stack");
    long count = 0;
    int ok = 1;
    lua_pushnil(A);
    while (ok && lua_next(A, ia)) {
        count++;
        switch (lua_type(A, -2)) {
        case LUA_TSTRING: sa = lua_tolstring(A, -2, &na); lua_pushlstring(B, sa, na); break;
        case LUA_TNUMBER: lua_pushnumber(B, lua_tonumber(A, -2)); break;
        case LUA_TBOOLEAN: lua_pushboolean(B, lua_toboolean(A, -2)); break;
        default: lua_pushnil(B); /* not a key the codec makes: rawget finds nothing */
        }
        lua_rawget(B, ib);
        ok = !lua_isnil(B, -1) && fuzz_same(A, -1, B, -1);
        lua_pop(B, 1);
        lua_pop(A, 1);
    }
    if (!ok) {
        lua_pop(A, 1); /* the key lua_next left */
        return 0;
    }
    lua_pushnil(B);
    while (lua_next(B, ib)) {
        count--;
        lua_pop(B, 1);
    }
    return count == 0;
}

#endif
