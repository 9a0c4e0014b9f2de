/* libFuzzer target for message round trips (host/runtime/message.c): the input is a little
 * program that builds one to four Lua values in a sender state (scalars with edge-case
 * numbers, strings, nested tables, tables shared or closing a cycle, metatables that raise,
 * functions, userdata, coroutines, tables as keys). Then sw_msg_encode either
 *   - succeeds: the values were sendable (checked against an independent walk of the rules in
 *     message.h) and sw_msg_decode in a receiver state gives equal values; or
 *   - refuses with a message: "message too large" (the limit is drawn from the input too), or
 *     the values broke a rule, which the independent walk must agree with.
 * Either way the sender's stack is unchanged and the message fits the caller's buffer. */
#include <stdint.h>

#include "fuzz_lua.h"
#include "message.h"

#define BUILD_DEPTH (SW_MSG_MAX_DEPTH + 3) /* a little past the limit, to reach the refusal */

static lua_State *A, *B;
static sw_msgbuf buf;

typedef struct input {
    const uint8_t *p, *end;
} input;

static unsigned next(input *in) { return in->p < in->end ? *in->p++ : 0; }

static uint64_t next64(input *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | next(in);
    return v;
}

static int raises(lua_State *L)
{
    return luaL_error(L, "a metamethod ran: the codec must use raw access only");
}

static const double specials[] = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  127.0,
                                  128.0,
                                  -128.0,
                                  0.5,
                                  1e308,
                                  -1e-308,
                                  4.9e-324,
                                  9007199254740992.0,
                                  9007199254740993.0,
                                  9223372036854775807.0,
                                  -9223372036854775808.0,
                                  18446744073709551616.0,
                                  INFINITY,
                                  -INFINITY,
                                  NAN};

/* Pushes a number from the input: small, any int64, any bit pattern, or an edge case. */
static void push_number(lua_State *L, input *in)
{
    unsigned how = next(in) % 4;
    if (how == 0) lua_pushnumber(L, (lua_Number)next(in));
    else if (how == 1) lua_pushnumber(L, (lua_Number)(int64_t)next64(in));
    else if (how == 2) {
        uint64_t bits = next64(in);
        double d;
        memcpy(&d, &bits, sizeof d);
        lua_pushnumber(L, d);
    } else lua_pushnumber(L, specials[next(in) % (sizeof specials / sizeof *specials)]);
}

static void push_string(lua_State *L, input *in, size_t max)
{
    size_t n = next(in);
    if (max > 255) n = n << 8 | next(in);
    n %= max + 1;
    size_t left = (size_t)(in->end - in->p);
    if (n > left) n = left;
    lua_pushlstring(L, (const char *)in->p, n);
    in->p += n;
}

static void push_value(lua_State *L, input *in, int depth);

/* A key: usually a scalar Lua accepts as a key, sometimes one the codec must refuse. */
static void push_key(lua_State *L, input *in, int depth)
{
    unsigned op = next(in) % 8;
    if (op <= 2) push_string(L, in, 63);
    else if (op <= 4) push_number(L, in);
    else if (op == 5) lua_pushboolean(L, next(in) & 1);
    else if (op == 6) lua_pushnumber(L, (lua_Number)(next(in) % 20 + 1)); /* array-ish */
    else push_value(L, in, depth); /* maybe a table or function as a key */
    /* Lua itself refuses nil and NaN keys (rawset raises) */
    if (lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TNUMBER && isnan(lua_tonumber(L, -1)))) {
        lua_pop(L, 1);
        lua_pushliteral(L, "key");
    }
}

/* A table: registered in the pool (index 1) before it is filled, so a reference from inside
 * it closes a cycle. */
static void push_table(lua_State *L, input *in, int depth)
{
    FUZZ_CHECK(lua_checkstack(L, 8), "stack");
    unsigned narr = next(in) % 12, nhash = next(in) % 8;
    lua_createtable(L, (int)narr, (int)nhash);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 1, (int)lua_objlen(L, 1) + 1);
    for (unsigned i = 1; i <= narr && in->p < in->end; i++) {
        push_value(L, in, depth + 1);
        lua_rawseti(L, -2, (int)i);
    }
    for (unsigned i = 0; i < nhash && in->p < in->end; i++) {
        push_key(L, in, depth + 1);
        push_value(L, in, depth + 1);
        lua_rawset(L, -3);
    }
    if (next(in) % 8 == 0) { /* metamethods that raise: never to be called */
        lua_createtable(L, 0, 4);
        const char *names[] = {"__index", "__newindex", "__len", "__pairs"};
        for (int i = 0; i < 4; i++) {
            lua_pushcfunction(L, raises);
            lua_setfield(L, -2, names[i]);
        }
        lua_setmetatable(L, -2);
    }
}

static void push_value(lua_State *L, input *in, int depth)
{
    unsigned op = next(in) % 16;
    if (depth >= BUILD_DEPTH && op >= 9) op = 3;
    switch (op) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, 0); break;
    case 2: lua_pushboolean(L, 1); break;
    case 3:
    case 4: push_number(L, in); break;
    case 5:
    case 6: push_string(L, in, 63); break;
    case 7: push_string(L, in, 4096); break;
    case 8: lua_pushnumber(L, specials[next(in) % (sizeof specials / sizeof *specials)]); break;
    case 9:
    case 10:
    case 11: push_table(L, in, depth); break;
    case 12: { /* a table built earlier, maybe one being filled (a cycle) */
        size_t n = lua_objlen(L, 1);
        if (n == 0) lua_pushnil(L);
        else lua_rawgeti(L, 1, (int)(next(in) % n + 1));
        break;
    }
    case 13: {
        unsigned k = next(in) % 4;
        if (k == 0) lua_pushcfunction(L, raises);
        else if (k == 1) lua_pushlightuserdata(L, in);
        else if (k == 2) lua_newuserdata(L, 8);
        else lua_newthread(L);
        break;
    }
    default: push_string(L, in, 8); break;
    }
}

/* The rules of message.h, walked independently of the encoder: 1 sendable, 0 not, -1 the walk
 * gave up (a shared table unfolds to more than the budget). */
typedef struct rules {
    const void *path[SW_MSG_MAX_DEPTH];
    int depth;
    long budget;
} rules;

static int sendable(lua_State *L, int idx, rules *r)
{
    int t = lua_type(L, idx);
    if (t == LUA_TNIL || t == LUA_TBOOLEAN || t == LUA_TNUMBER || t == LUA_TSTRING) return 1;
    if (t != LUA_TTABLE) return 0;
    const void *self = lua_topointer(L, idx);
    for (int i = 0; i < r->depth; i++)
        if (r->path[i] == self) return 0; /* a cycle */
    if (r->depth == SW_MSG_MAX_DEPTH) return 0;
    if (--r->budget < 0) return -1;
    FUZZ_CHECK(lua_checkstack(L, 4), "stack");
    r->path[r->depth++] = self;
    int result = 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int kt = lua_type(L, -2);
        int ok = kt == LUA_TSTRING || kt == LUA_TNUMBER || kt == LUA_TBOOLEAN;
        if (ok) ok = sendable(L, lua_gettop(L), r);
        if (ok != 1) {
            lua_pop(L, 2);
            result = ok;
            break;
        }
        lua_pop(L, 1);
    }
    r->depth--;
    return result;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    A = fuzz_new_state();
    B = fuzz_new_state();
    sw_msgbuf_init(&buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, data + size};
    lua_settop(A, 0);
    lua_settop(B, 0);
    lua_newtable(A);              /* 1: the pool of tables built */
    lua_pushcfunction(A, raises); /* 2: unsendable, below the range encoded */
    unsigned lim = next(&in);
    size_t limit = lim % 4 == 0 ? (size_t)(lim >> 2) * 64 : (size_t)1 << 20;
    size_t errlen = next(&in) % 4 == 0 ? next(&in) % 48 : 160;
    int n = (int)(next(&in) % 4) + 1;
    int negative = next(&in) & 1;
    for (int i = 0; i < n; i++) push_value(A, &in, 0);
    lua_pushcfunction(A, raises); /* unsendable, above the range */
    int top = lua_gettop(A);

    /* exactly errlen bytes, so ASan sees a message written past them */
    char *err = malloc(errlen ? errlen : 1);
    FUZZ_CHECK(err != NULL, "malloc");
    int rc = sw_msg_encode(A, negative ? -(n + 1) : 3, n, limit, &buf, err, errlen);
    FUZZ_CHECK(lua_gettop(A) == top, "encode changed the stack from %d to %d", top, lua_gettop(A));
    if (errlen) FUZZ_CHECK(memchr(err, 0, errlen) != NULL, "the message is not terminated");

    rules r = {.depth = 0, .budget = 20000};
    int expect = 1;
    for (int i = 0; i < n && expect == 1; i++) expect = sendable(A, 3 + i, &r);
    FUZZ_CHECK(lua_gettop(A) == top, "the rules walk changed the stack");

    if (rc != 0) {
        FUZZ_CHECK(buf.len == 0, "a refused encode left %zu bytes", buf.len);
        if (errlen > 1) FUZZ_CHECK(err[0] != 0, "refused without a message");
        int too_large =
            errlen < 20 || strncmp(err, "message too large", 17) == 0; /* or cut short */
        FUZZ_CHECK(too_large || expect != 1, "sendable values refused: %s", err);
        free(err);
        return 0;
    }
    free(err);
    FUZZ_CHECK(expect != 0, "unsendable values encoded");
    FUZZ_CHECK(buf.len <= limit, "%zu bytes encoded over the limit of %zu", buf.len, limit);
    lua_pushliteral(B, "below");
    int m = sw_msg_decode(B, buf.data, buf.len);
    FUZZ_CHECK(m == n, "%d values encoded, %d decoded", n, m);
    FUZZ_CHECK(lua_type(B, 1) == LUA_TSTRING, "decode overwrote the value below");
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(fuzz_same(A, 3 + i, B, 2 + i), "value %d differs after a round trip", i + 1);
    return 0;
}
