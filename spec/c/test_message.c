/* Unit tests for host/message.c: round trips between two lua_States, refusals with their
 * messages, limits, metatables left alone, and corrupt or truncated buffers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "message.h"

typedef struct fixture {
    lua_State *a, *b; /* sender, receiver */
    sw_msgbuf buf;
    char err[256];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->a = luaL_newstate();
    f->b = luaL_newstate();
    luaL_openlibs(f->a);
    luaL_openlibs(f->b);
    sw_msgbuf_init(&f->buf);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lua_close(f->a);
    lua_close(f->b);
    sw_msgbuf_free(&f->buf);
    free(f);
    return 0;
}

static void run(lua_State *L, const char *code)
{
    if (luaL_dostring(L, code) != 0) fail_msg("lua: %s", lua_tostring(L, -1));
}

/* Deep equality of a value in one state and a value in another (raw, no metatables). */
static int same(lua_State *A, int ia, lua_State *B, int ib)
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
    int count = 0, ok = 1;
    lua_pushnil(A);
    while (ok && lua_next(A, ia)) {
        count++;
        switch (lua_type(A, -2)) {
        case LUA_TSTRING:
            sa = lua_tolstring(A, -2, &na);
            lua_pushlstring(B, sa, na);
            break;
        case LUA_TNUMBER: lua_pushnumber(B, lua_tonumber(A, -2)); break;
        case LUA_TBOOLEAN: lua_pushboolean(B, lua_toboolean(A, -2)); break;
        default: lua_pushnil(B);
        }
        lua_rawget(B, ib);
        ok = same(A, -1, B, -1);
        lua_pop(B, 1);
        lua_pop(A, 1);
    }
    if (!ok) {
        lua_pop(A, 1);
        return 0;
    }
    lua_pushnil(B);
    while (lua_next(B, ib)) {
        count--;
        lua_pop(B, 1);
    }
    return count == 0;
}

/* Encodes n values from the top of a, decodes them into b; returns the decoded count. */
static int roundtrip(fixture *f, int n)
{
    int top_a = lua_gettop(f->a), top_b = lua_gettop(f->b);
    int rc = sw_msg_encode(f->a, top_a - n + 1, n, SIZE_MAX, &f->buf, f->err, sizeof f->err);
    if (rc != 0) fail_msg("encode: %s", f->err);
    assert_int_equal(lua_gettop(f->a), top_a);
    int got = sw_msg_decode(f->b, f->buf.data, f->buf.len);
    assert_int_equal(got, n);
    assert_int_equal(lua_gettop(f->b), top_b + n);
    for (int i = 0; i < n; i++) assert_true(same(f->a, top_a - n + 1 + i, f->b, top_b + 1 + i));
    return got;
}

/* Encodes global `name` of a expecting failure; checks err contains each expected part. */
static void refuse(fixture *f, const char *name, const char *part1, const char *part2)
{
    lua_getglobal(f->a, name);
    int top = lua_gettop(f->a);
    assert_int_equal(sw_msg_encode(f->a, -1, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), -1);
    assert_int_equal(lua_gettop(f->a), top);
    assert_int_equal(f->buf.len, 0);
    if (!strstr(f->err, part1) || (part2 && !strstr(f->err, part2)))
        fail_msg("unexpected error for %s: %s", name, f->err);
    lua_pop(f->a, 1);
}

static void test_scalars(void **state)
{
    fixture *f = *state;
    run(f->a, "scalars = {n = 0}\n"
              "local function add(...) for i = 1, select('#', ...) do\n"
              "  scalars.n = scalars.n + 1; scalars[scalars.n] = (select(i, ...)) end end\n"
              "add(true, false, 0, -0.0, 1, 127, 128, -1, -128, 255, 65535, 2^31, -2^31,\n"
              "    2^53, -2^53, 2^53 + 2, 2^63, -2^63, 2^64, 1e300, -1e-300, 0.5, 1/0, -1/0,\n"
              "    0/0, 4.9e-324, '', 'short', ('x'):rep(63), ('y'):rep(64), ('z'):rep(1000),\n"
              "    'a\\0b\\0\\0', '\\0', '\\255\\254')");
    lua_getglobal(f->a, "scalars");
    int tbl = lua_gettop(f->a);
    lua_getfield(f->a, tbl, "n");
    int n = (int)lua_tonumber(f->a, -1);
    lua_pop(f->a, 1);
    for (int i = 1; i <= n; i++) lua_rawgeti(f->a, tbl, i);
    lua_pushnil(f->a); /* nil travels too */
    assert_int_equal(roundtrip(f, n + 1), n + 1);
    assert_true(lua_isnil(f->b, -1));
    /* -0.0 keeps its sign, NaN stays NaN, big integers stay exact */
    assert_true(signbit(lua_tonumber(f->b, 4)) && lua_tonumber(f->b, 4) == 0);
    assert_true(isnan(lua_tonumber(f->b, 25)));
    assert_true(lua_tonumber(f->b, 16) == 9007199254740994.0);
    size_t len;
    const char *s = lua_tolstring(f->b, 32, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "a\0b\0\0", 5);
}

static void test_zero_values(void **state)
{
    fixture *f = *state;
    assert_int_equal(sw_msg_encode(f->a, 1, 0, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    assert_int_equal(sw_msg_decode(f->b, f->buf.data, f->buf.len), 0);
    assert_int_equal(lua_gettop(f->b), 0);
}

static void test_tables(void **state)
{
    fixture *f = *state;
    run(f->a, "small = {id = 42, name = 'hello', tags = {'a', 'b'}, ok = true}\n"
              "empty = {}\n"
              "holes = {1, nil, 3, nil, 5, [100] = 100, [0] = 0, [-1] = -1}\n"
              "keys = {[true] = 't', [false] = 'f', [1.5] = 'x', [2^40] = 'big', ['a\\0b'] = 1,\n"
              "        [''] = 'empty', [-0.5] = {}}\n"
              "nested = {a = {b = {c = {d = {e = 'deep', list = {1, 2, {3, {4}}}}}}}, 'top'}\n"
              "arr = {} for i = 1, 1000 do arr[i] = i * 3 end\n"
              "map = {} for i = 1, 1000 do map['k' .. i] = {i, tostring(i)} end\n"
              "mixed = {1, 2, 3, x = 'x', [4] = 4, [6] = 6}\n");
    const char *names[] = {"small", "empty", "holes", "keys", "nested", "arr", "map", "mixed"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        lua_getglobal(f->a, names[i]);
        roundtrip(f, 1);
        assert_int_equal(lua_type(f->b, -1), LUA_TTABLE);
        lua_pop(f->a, 1);
        lua_pop(f->b, 1);
    }
    /* several values at once, and a negative `first` */
    run(f->a, "return 1, small, 'two', nested");
    roundtrip(f, 4);
    lua_settop(f->a, 0);
    lua_settop(f->b, 0);
    /* reusing the buffer gives the same bytes */
    lua_getglobal(f->a, "small");
    assert_int_equal(sw_msg_encode(f->a, -1, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    size_t len1 = f->buf.len;
    assert_int_equal(sw_msg_encode(f->a, 1, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    assert_int_equal(f->buf.len, len1);
}

static void test_dag_copied_twice(void **state)
{
    fixture *f = *state;
    run(f->a, "x = {1, 2} dag = {a = x, b = x, c = {x, x}}");
    lua_getglobal(f->a, "dag");
    roundtrip(f, 1);
    /* the receiver gets distinct, equal tables */
    lua_setglobal(f->b, "got");
    run(f->b, "assert(got.a ~= got.b and got.a[2] == 2 and got.b[2] == 2)\n"
              "assert(got.c[1] ~= got.c[2] and got.c[1] ~= got.a)");
}

static void test_cycles(void **state)
{
    fixture *f = *state;
    run(f->a, "selfc = {} selfc.self = selfc\n"
              "cyc = {a = {b = {}}} cyc.a.b.c = cyc\n"
              "arrc = {1, 2, {}} arrc[3][1] = arrc\n"
              "keyc = {} keyc.x = {y = keyc}");
    refuse(f, "selfc", "cannot send a table with a cycle", "(at payload.self)");
    refuse(f, "cyc", "cannot send a table with a cycle", "(at payload.a.b.c)");
    refuse(f, "arrc", "cannot send a table with a cycle", "(at payload[3][1])");
    refuse(f, "keyc", "cycle", "payload.x.y");
}

static void test_bad_types(void **state)
{
    fixture *f = *state;
    run(f->a, "fn = {x = {y = print}}\n"
              "co = {list = {1, 2, coroutine.create(function() end)}}\n"
              "fkey = {inner = {[print] = 1}}\n"
              "tkey = {[{}] = 1}\n"
              "odd = {['a b'] = {[2.5] = {[true] = print}}}\n");
    lua_newuserdata(f->a, 16);
    lua_setglobal(f->a, "ud");
    lua_pushlightuserdata(f->a, f);
    lua_setglobal(f->a, "lud");
    run(f->a, "ud = {u = ud} lud = {lud}");
    refuse(f, "fn", "cannot send a function value", "(at payload.x.y)");
    refuse(f, "co", "cannot send a thread value", "(at payload.list[3])");
    refuse(f, "ud", "cannot send a userdata value", "(at payload.u)");
    refuse(f, "lud", "cannot send a light userdata value", "(at payload[1])");
    refuse(f, "fkey", "cannot send a table with a function key", "(at payload.inner)");
    refuse(f, "tkey", "cannot send a table with a table key", "(at payload)");
    refuse(f, "odd", "function value", "(at payload[\"a b\"][2.5][true])");
    refuse(f, "print", "cannot send a function value", "(at payload)");
    run(f->a, "cd = {n = {require('ffi').new('int[1]')}}");
    refuse(f, "cd", "cannot send a cdata value", "(at payload.n[1])");
    /* with several values the path names which one */
    run(f->a, "return 1, {z = print}");
    assert_int_equal(sw_msg_encode(f->a, 1, 2, SIZE_MAX, &f->buf, f->err, sizeof f->err), -1);
    assert_string_equal(f->err, "cannot send a function value (at payload#2.z)");
    assert_int_equal(lua_gettop(f->a), 2);
    /* a tiny err buffer is still terminated */
    char tiny[8];
    assert_int_equal(sw_msg_encode(f->a, 1, 2, SIZE_MAX, &f->buf, tiny, sizeof tiny), -1);
    assert_string_equal(tiny, "cannot ");
    assert_int_equal(sw_msg_encode(f->a, 1, 2, SIZE_MAX, &f->buf, NULL, 0), -1);
}

static void test_depth_limit(void **state)
{
    fixture *f = *state;
    char code[200];
    snprintf(code, sizeof code,
             "local function chain(n) local t = {} for i = 2, n do t = {t} end return t end\n"
             "ok, deep = chain(%d), chain(%d)",
             SW_MSG_MAX_DEPTH, SW_MSG_MAX_DEPTH + 1);
    run(f->a, code);
    lua_getglobal(f->a, "ok");
    roundtrip(f, 1);
    lua_pop(f->a, 1);
    refuse(f, "deep", "cannot send tables nested deeper than 100 levels", "payload[1][1]");
}

static void test_size_limit(void **state)
{
    fixture *f = *state;
    run(f->a, "big = {s = ('x'):rep(1000), n = 1}");
    lua_getglobal(f->a, "big");
    assert_int_equal(sw_msg_encode(f->a, -1, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    size_t exact = f->buf.len;
    assert_int_equal(sw_msg_encode(f->a, -1, 1, exact, &f->buf, f->err, sizeof f->err), 0);
    assert_int_equal(f->buf.len, exact);
    for (size_t limit = 0; limit < exact; limit += (limit < 20 || limit > exact - 20) ? 1 : 37) {
        assert_int_equal(sw_msg_encode(f->a, -1, 1, limit, &f->buf, f->err, sizeof f->err), -1);
        char want[64];
        snprintf(want, sizeof want, "message too large: over %zu bytes", limit);
        assert_string_equal(f->err, want);
        assert_int_equal(f->buf.len, 0);
        assert_int_equal(lua_gettop(f->a), 1);
    }
    /* a huge string over the limit is refused before any copy */
    run(f->a, "return ('q'):rep(2^22)");
    assert_int_equal(sw_msg_encode(f->a, -1, 1, 1 << 20, &f->buf, f->err, sizeof f->err), -1);
    assert_true(f->buf.cap < (1 << 20));
}

static void test_metatables_ignored(void **state)
{
    fixture *f = *state;
    run(f->a, "local boom = function() error('metamethod called') end\n"
              "mt = setmetatable({a = 1, list = {1, 2}}, {__index = boom, __newindex = boom,\n"
              "  __pairs = boom, __len = boom, __eq = boom, __tostring = boom})\n"
              "proxy = setmetatable({}, {__index = {hidden = 1}})");
    lua_getglobal(f->a, "mt");
    roundtrip(f, 1);
    assert_int_equal(lua_getmetatable(f->b, -1), 0);
    lua_getglobal(f->a, "proxy");
    roundtrip(f, 1);
    lua_getfield(f->b, -1, "hidden");
    assert_true(lua_isnil(f->b, -1));
}

static void test_dag_blowup_bounded_by_limit(void **state)
{
    fixture *f = *state;
    /* 2^40 leaves if copied in full: the size limit stops it early */
    run(f->a, "local t = {'leaf'} for i = 1, 40 do t = {t, t} end blowup = t");
    lua_getglobal(f->a, "blowup");
    assert_int_equal(sw_msg_encode(f->a, -1, 1, 1 << 20, &f->buf, f->err, sizeof f->err), -1);
    assert_string_equal(f->err, "message too large: over 1048576 bytes");
}

static void test_stack_unchanged(void **state)
{
    fixture *f = *state;
    run(f->a, "return 'below', {a = {b = {c = print}}}, {x = {1, 2, 3}}");
    for (int i = 0; i < 3; i++) {
        int rc = sw_msg_encode(f->a, 2, 2 - i % 2, SIZE_MAX, &f->buf, f->err, sizeof f->err);
        assert_int_equal(rc, -1);
        assert_int_equal(lua_gettop(f->a), 3);
        assert_string_equal(lua_tostring(f->a, 1), "below");
    }
    assert_int_equal(sw_msg_encode(f->a, 3, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    assert_int_equal(sw_msg_encode(f->a, 1, 4, SIZE_MAX, &f->buf, f->err, sizeof f->err), -1);
    assert_int_equal(lua_gettop(f->a), 3);
}

/* Builds a rich payload in a and leaves its encoding in f->buf. */
static void rich(fixture *f)
{
    run(f->a, "return 1, 'two', {id = 42, name = 'hello', tags = {'a', 'b'}, ok = true,\n"
              "  f = 0.25, neg = -123456789, nested = {{}, {x = {y = {z = 'deep'}}}},\n"
              "  [7] = false, [1.5] = 2^60, long = ('L'):rep(300)}, nil, 0/0");
    assert_int_equal(sw_msg_encode(f->a, 1, 5, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    lua_settop(f->a, 0);
}

static void test_truncated(void **state)
{
    fixture *f = *state;
    rich(f);
    lua_pushstring(f->b, "sentinel");
    for (size_t len = 0; len < f->buf.len; len++) {
        unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
        memcpy(copy, f->buf.data, len);
        assert_int_equal(sw_msg_decode(f->b, copy, len), -1);
        assert_int_equal(lua_gettop(f->b), 1);
        free(copy);
    }
    assert_int_equal(sw_msg_decode(f->b, NULL, 0), -1);
    assert_int_equal(sw_msg_decode(f->b, f->buf.data, f->buf.len), 5);
}

static void test_random_corruption(void **state)
{
    fixture *f = *state;
    rich(f);
    size_t len = f->buf.len;
    unsigned char *copy = malloc(len + 8);
    unsigned seed = 12345;
    int ok = 0;
    for (int round = 0; round < 20000; round++) {
        memcpy(copy, f->buf.data, len);
        int flips = 1 + round % 4;
        for (int i = 0; i < flips; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            copy[at] = (unsigned char)(seed >> 16);
        }
        seed = seed * 1103515245u + 12345u;
        size_t cut = round % 3 == 0 ? (seed >> 8) % (len + 1) : len;
        int got = sw_msg_decode(f->b, copy, cut);
        if (got >= 0) {
            ok++;
            assert_int_equal(lua_gettop(f->b), got);
        } else {
            assert_int_equal(lua_gettop(f->b), 0);
        }
        lua_settop(f->b, 0);
    }
    free(copy);
    assert_true(ok > 0); /* some flips (inside strings) still decode */
}

static void test_crafted(void **state)
{
    fixture *f = *state;
    const unsigned char v = 0xA1; /* format version */
    struct {
        unsigned char bytes[24];
        size_t len;
    } cases[] = {
        {{0x00}, 1},                /* wrong version */
        {{v}, 1},                   /* no count */
        {{v, 0x02, 0x00}, 3},       /* count 2, one value */
        {{v, 0x01, 0x00, 0x00}, 4}, /* trailing byte */
        {{v, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 12},
        {{v, 0x01, 0x07}, 3},                                    /* unknown tag */
        {{v, 0x01, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'}, 9}, /* string past the end */
        {{v, 0x01, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 11}, /* huge table */
        {{v, 0x01, 0x06, 0, 0, 0, 0, 1, 0, 0, 0, 0x00, 0x81}, 13},             /* nil key */
        {{v, 0x01, 0x06, 0, 0, 0, 0, 1, 0, 0, 0, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0x81}, 21},
        {{v, 0x01, 0x06, 0, 0, 0, 0, 1, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0x81}, 21},
        {{v, 0x01, 0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 14},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (sw_msg_decode(f->b, cases[i].bytes, cases[i].len) != -1)
            fail_msg("crafted case %zu decoded", i);
        assert_int_equal(lua_gettop(f->b), 0);
    }
    /* the NaN key case is well formed once the key is a number: {[1.0] = 1} */
    unsigned char okkey[] = {v,    0x01, 0x06, 0, 0, 0, 0, 1,    0,    0,   0,
                             0x03, 0,    0,    0, 0, 0, 0, 0xf0, 0x3f, 0x81};
    assert_int_equal(sw_msg_decode(f->b, okkey, sizeof okkey), 1);
    lua_rawgeti(f->b, -1, 1);
    assert_int_equal(lua_tonumber(f->b, -1), 1);
    lua_settop(f->b, 0);
    /* nesting past the limit in a crafted buffer: 101 tables, each holding the next */
    size_t n = 2 + (SW_MSG_MAX_DEPTH + 1) * 9;
    unsigned char *deep = calloc(1, n);
    deep[0] = v;
    deep[1] = 1;
    for (int i = 0; i <= SW_MSG_MAX_DEPTH; i++) {
        unsigned char *t = deep + 2 + i * 9;
        t[0] = 0x06;
        t[1] = i < SW_MSG_MAX_DEPTH; /* one array item, except the innermost table */
    }
    assert_int_equal(sw_msg_decode(f->b, deep, n), -1);
    assert_int_equal(lua_gettop(f->b), 0);
    free(deep);
}

/* An allocator with a byte budget, to make decode run out of memory. */
typedef struct budget {
    size_t used, limit;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    budget *b = ud;
    if (nsize == 0) {
        b->used -= osize;
        free(ptr);
        return NULL;
    }
    if (nsize > osize && b->used + (nsize - osize) > b->limit) return NULL;
    void *p = realloc(ptr, nsize);
    if (p) b->used = b->used - osize + nsize;
    return p;
}

typedef struct pdecode {
    const sw_msgbuf *buf;
    int got;
} pdecode;

static int decode_cf(lua_State *L)
{
    pdecode *p = lua_touserdata(L, 1);
    p->got = sw_msg_decode(L, p->buf->data, p->buf->len);
    return 0;
}

static void test_decode_out_of_memory(void **state)
{
    fixture *f = *state;
    run(f->a, "local t = {} for i = 1, 2000 do t[i] = {name = 'n' .. i, i} end return t");
    assert_int_equal(sw_msg_encode(f->a, -1, 1, SIZE_MAX, &f->buf, f->err, sizeof f->err), 0);
    budget b = {0, SIZE_MAX};
    lua_State *L = lua_newstate(budget_alloc, &b);
    if (!L) skip();               /* a non-GC64 LuaJIT on x64 refuses custom allocators */
    b.limit = b.used + 64 * 1024; /* far too little for 2000 tables */
    pdecode p = {&f->buf, 0};
    assert_int_equal(lua_cpcall(L, decode_cf, &p), LUA_ERRMEM);
    lua_settop(L, 0);
    b.limit = SIZE_MAX;
    assert_int_equal(lua_cpcall(L, decode_cf, &p), 0);
    assert_int_equal(p.got, 1);
    lua_close(L);
    assert_int_equal(b.used, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dag_copied_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cycles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metatables_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dag_blowup_bounded_by_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crafted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decode_out_of_memory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
