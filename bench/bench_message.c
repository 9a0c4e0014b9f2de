/* Message copy speed: encode + decode through host/message.c between two lua_States on one
 * thread, against the floor, a raw recursive copy from one state's stack to the other's
 * (lua_next + push, no buffer), with and without a counting pass for table-size hints.
 * Prints medians of several rounds, and the median per-round ratio of ours to the faster raw. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>

#include "message.h"

#define ROUNDS 11

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The floor: copy the value at ia in A onto B's stack. sized also counts entries first so
 * lua_createtable gets hints (one more pass over A). */
static void raw_copy(lua_State *A, int ia, lua_State *B, int sized)
{
    size_t n;
    const char *s;
    switch (lua_type(A, ia)) {
    case LUA_TBOOLEAN: lua_pushboolean(B, lua_toboolean(A, ia)); return;
    case LUA_TNUMBER: lua_pushnumber(B, lua_tonumber(A, ia)); return;
    case LUA_TSTRING:
        s = lua_tolstring(A, ia, &n);
        lua_pushlstring(B, s, n);
        return;
    case LUA_TTABLE: break;
    default: lua_pushnil(B); return;
    }
    lua_checkstack(B, 3);
    if (sized) {
        int narr = (int)lua_objlen(A, ia), all = 0;
        lua_pushnil(A);
        while (lua_next(A, ia)) {
            all++;
            lua_pop(A, 1);
        }
        lua_createtable(B, narr, all - narr);
    } else {
        lua_newtable(B);
    }
    lua_pushnil(A);
    int k = lua_gettop(A);
    while (lua_next(A, ia)) {
        raw_copy(A, k, B, sized);
        raw_copy(A, k + 1, B, sized);
        lua_rawset(B, -3);
        lua_pop(A, 1);
    }
}

typedef enum { OURS, ENCODE, DECODE, RAW, RAW_SIZED } mode;

/* Runs iters copies of the value on top of A in the given mode; returns messages/s. */
static double round_rate(lua_State *A, lua_State *B, sw_msgbuf *buf, mode m, int iters)
{
    char err[128];
    int top = lua_gettop(A);
    if (m == DECODE && sw_msg_encode(A, top, 1, SIZE_MAX, buf, err, sizeof err) != 0) {
        fprintf(stderr, "encode: %s\n", err);
        exit(1);
    }
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        switch (m) {
        case OURS:
        case ENCODE:
            if (sw_msg_encode(A, top, 1, SIZE_MAX, buf, err, sizeof err) != 0) {
                fprintf(stderr, "encode: %s\n", err);
                exit(1);
            }
            if (m == ENCODE) break;
            /* fall through */
        case DECODE:
            if (sw_msg_decode(B, buf->data, buf->len) != 1) {
                fprintf(stderr, "decode failed\n");
                exit(1);
            }
            break;
        case RAW:
        case RAW_SIZED: raw_copy(A, top, B, m == RAW_SIZED); break;
        }
        lua_settop(B, 0);
    }
    return iters / (now() - t0);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *r, int n)
{
    qsort(r, (size_t)n, sizeof *r, cmp);
    return r[n / 2];
}

static void bench(const char *name, const char *code, int iters)
{
    lua_State *A = luaL_newstate(), *B = luaL_newstate();
    luaL_openlibs(A);
    luaL_openlibs(B);
    if (luaL_dostring(A, code) != 0) {
        fprintf(stderr, "%s: %s\n", name, lua_tostring(A, -1));
        exit(1);
    }
    sw_msgbuf buf;
    sw_msgbuf_init(&buf);
    char err[128];
    sw_msg_encode(A, -1, 1, SIZE_MAX, &buf, err, sizeof err);
    size_t bytes = buf.len;
    /* modes alternate within each round, so load from elsewhere hits them alike */
    double r[RAW_SIZED + 1][ROUNDS], ratio[ROUNDS];
    for (int m = OURS; m <= RAW_SIZED; m++)
        round_rate(A, B, &buf, (mode)m, iters / 4); /* warm up */
    for (int i = 0; i < ROUNDS; i++) {
        for (int m = OURS; m <= RAW_SIZED; m++) r[m][i] = round_rate(A, B, &buf, (mode)m, iters);
        double best_raw = r[RAW][i] > r[RAW_SIZED][i] ? r[RAW][i] : r[RAW_SIZED][i];
        ratio[i] = r[OURS][i] / best_raw;
    }
    double med[RAW_SIZED + 1];
    for (int m = OURS; m <= RAW_SIZED; m++) med[m] = median(r[m], ROUNDS);
    printf("%-17s %5zu B  ours %9.0f msg/s (encode %7.0f ns, decode %7.0f ns)  "
           "raw %9.0f msg/s (sized %9.0f)  ours/raw %.2f\n",
           name, bytes, med[OURS], 1e9 / med[ENCODE], 1e9 / med[DECODE], med[RAW], med[RAW_SIZED],
           median(ratio, ROUNDS));
    sw_msgbuf_free(&buf);
    lua_close(A);
    lua_close(B);
}

int main(void)
{
    printf("message copy between two lua_States on one thread, median of %d rounds\n", ROUNDS);
    bench("small table", "return {id = 42, name = 'hello', tags = {'a', 'b'}, ok = true}", 100000);
    bench("100 small tables",
          "local t = {} for i = 1, 100 do\n"
          "  t[i] = {id = i, name = 'user' .. i, score = i * 1.5, ok = i % 2 == 0} end\n"
          "return t",
          1000);
    bench("1 KB string", "return ('0123456789abcdef'):rep(64)", 300000);
    return 0;
}
