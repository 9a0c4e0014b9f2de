/* Message payloads: Lua values <-> a self-contained byte buffer (see message.h).
 * Format (native byte order; an in-process format, not a wire format):
 *   version byte, varint count, then count values. A value is one tag byte, then:
 *   0x00 nil | 0x01 false | 0x02 true | 0x03 double: 8 bytes | 0x04 integer: zigzag varint
 *   | 0x05 string: varint length, bytes | 0x06 table: u32 narr, u32 nhash, narr values
 *   (keys 1..narr), nhash key/value pairs | 0x07 host value (sw_msg_ext): kind byte, varint
 *   length, bytes | 0x40+n short string of n <= 63 bytes
 *   | 0x80+i small integer 0 <= i <= 127. Varints are LEB128, at most 10 bytes.
 * Cycles: only a table already on the current path can close one, and the path is at most
 * SW_MSG_MAX_DEPTH tables, so a fixed array checked in O(depth) per table suffices. */
#include "message.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_VERSION 0xA1
enum {
    T_NIL,
    T_FALSE,
    T_TRUE,
    T_DOUBLE,
    T_INT,
    T_STR,
    T_TABLE,
    T_EXT,
    T_SHORTSTR = 0x40,
    SHORTSTR_MAX = 63,
    T_SMALLINT = 0x80
};
#define TABLE_HEAD 9          /* tag + two u32 counts */
#define HINT_MAX   (1u << 24) /* clamp on lua_createtable hints (LuaJIT raises past 2^26) */

static _Atomic(const sw_msg_ext *) msg_ext;

void sw_msg_set_ext(const sw_msg_ext *ext) { atomic_store(&msg_ext, ext); }

void sw_msgbuf_init(sw_msgbuf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void sw_msgbuf_free(sw_msgbuf *b)
{
    free(b->data);
    sw_msgbuf_init(b);
}

/* ---- encoding ---- */

typedef struct enc {
    lua_State *L;
    sw_msgbuf *b;
    size_t limit;
    char *err;
    size_t errlen;
    int n, which;                       /* top-level values; the one being encoded */
    int depth;                          /* tables on the current path */
    const void *path[SW_MSG_MAX_DEPTH]; /* those tables, outermost first */
    int keyidx[SW_MSG_MAX_DEPTH];       /* stack slot of the key visited in each */
} enc;

static void append(enc *e, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= e->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(e->err + *used, e->errlen - *used, fmt, ap);
    va_end(ap);
    if (r > 0) *used = (*used + (size_t)r < e->errlen) ? *used + (size_t)r : e->errlen - 1;
}

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || n > 40 || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'))) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
              ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
            return 0;
    return 1;
}

static void append_key(enc *e, size_t *used, int idx)
{
    lua_State *L = e->L;
    size_t n;
    const char *s;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &n);
        if (is_ident(s, n)) {
            append(e, used, ".%s", s);
            return;
        }
        append(e, used, "[\"");
        for (size_t i = 0; i < n && i < 40; i++)
            append(e, used, "%c", (s[i] >= 32 && s[i] < 127 && s[i] != '"') ? s[i] : '?');
        append(e, used, n > 40 ? "...\"]" : "\"]");
        return;
    case LUA_TNUMBER: append(e, used, "[%.14g]", (double)lua_tonumber(L, idx)); return;
    case LUA_TBOOLEAN: append(e, used, lua_toboolean(L, idx) ? "[true]" : "[false]"); return;
    default: append(e, used, "[?]");
    }
}

/* Writes "<what> (at payload.k1.k2...)" into err, naming the first `levels` keys. */
static int fail_at(enc *e, int levels, const char *fmt, ...)
{
    if (e->errlen == 0) return -1;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(e->err, e->errlen, fmt, ap);
    va_end(ap);
    size_t used = r < 0 ? 0 : ((size_t)r < e->errlen ? (size_t)r : e->errlen - 1);
    if (levels < 0) return -1;
    append(e, &used, e->n == 1 ? " (at payload" : " (at payload#%d", e->which + 1);
    for (int i = 0; i < levels; i++) append_key(e, &used, e->keyidx[i]);
    append(e, &used, ")");
    return -1;
}

static const char *type_name(lua_State *L, int t)
{
    return t == LUA_TLIGHTUSERDATA ? "light userdata" : lua_typename(L, t);
}

static int too_large(enc *e)
{
    return fail_at(e, -1, "message too large: over %zu bytes", e->limit);
}

static int grow(enc *e, size_t need)
{
    sw_msgbuf *b = e->b;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < need) cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
    unsigned char *p = realloc(b->data, cap);
    if (!p) return fail_at(e, -1, "cannot send: out of memory");
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Makes room for n more bytes (the size limit is checked separately, on what is written). */
static inline int room(enc *e, size_t n) { return n <= e->b->cap - e->b->len ? 0 : grow(e, n); }

/* Accounts for n bytes just written at the end of the buffer; fails past the limit. */
static inline int wrote(enc *e, size_t n)
{
    e->b->len += n;
    return e->b->len > e->limit ? too_large(e) : 0;
}

static int enc_byte(enc *e, unsigned char c)
{
    if (room(e, 1)) return -1;
    e->b->data[e->b->len] = c;
    return wrote(e, 1);
}

static int enc_number(enc *e, double d)
{
    if (room(e, 11)) return -1;
    unsigned char *p = e->b->data + e->b->len;
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        int64_t i = (int64_t)d;
        if ((double)i == d && (i != 0 || !signbit(d))) {
            if (i >= 0 && i < 128) {
                p[0] = (unsigned char)(T_SMALLINT | i);
                return wrote(e, 1);
            }
            p[0] = T_INT;
            return wrote(e, 1 + sw_msg_varint(p + 1, ((uint64_t)i << 1) ^ (0 - (uint64_t)(i < 0))));
        }
    }
    p[0] = T_DOUBLE;
    memcpy(p + 1, &d, sizeof d);
    return wrote(e, 1 + sizeof d);
}

static int enc_string(enc *e, const char *s, size_t n)
{
    /* refuse before allocating: a huge string over the limit is never copied */
    if (n > e->limit - e->b->len) return too_large(e);
    if (room(e, n + 11)) return -1;
    unsigned char *p = e->b->data + e->b->len;
    size_t h = 1;
    if (n <= SHORTSTR_MAX) {
        p[0] = (unsigned char)(T_SHORTSTR + n);
    } else {
        p[0] = T_STR;
        h += sw_msg_varint(p + 1, n);
    }
    memcpy(p + h, s, n);
    return wrote(e, h + n);
}

static int enc_value(enc *e, int idx, int t);

/* A value of a table: its key is at k, the value at k + 1. */
static int enc_table(enc *e, int idx)
{
    lua_State *L = e->L;
    const void *t = lua_topointer(L, idx);
    for (int i = 0; i < e->depth; i++)
        if (e->path[i] == t) return fail_at(e, e->depth, "cannot send a table with a cycle");
    if (e->depth == SW_MSG_MAX_DEPTH)
        return fail_at(e, e->depth, "cannot send tables nested deeper than %d levels",
                       SW_MSG_MAX_DEPTH);
    if (!lua_checkstack(L, 3)) return fail_at(e, e->depth, "cannot send: Lua stack overflow");
    if (room(e, TABLE_HEAD)) return -1;
    size_t head = e->b->len;
    e->b->data[head] = T_TABLE; /* counts are filled in at the end */
    if (wrote(e, TABLE_HEAD)) return -1;
    int d = e->depth++;
    e->path[d] = t;
    uint64_t narr = 0, nhash = 0;
    int in_array = 1;
    lua_pushnil(L);
    int k = e->keyidx[d] = lua_gettop(L);
    while (lua_next(L, idx)) {
        int kt = lua_type(L, k);
        /* lua_next visits the array part first, in order: those keys need not be written */
        if (in_array && kt == LUA_TNUMBER && lua_tonumber(L, k) == (lua_Number)(narr + 1)) {
            narr++;
        } else {
            in_array = 0;
            if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN)
                return fail_at(e, d, "cannot send a table with a %s key", type_name(L, kt));
            if (enc_value(e, k, kt)) return -1;
            nhash++;
        }
        if (enc_value(e, k + 1, lua_type(L, k + 1))) return -1;
        lua_settop(L, k);
    }
    e->depth = d;
    if (narr > UINT32_MAX || nhash > UINT32_MAX) return too_large(e);
    uint32_t c[2] = {(uint32_t)narr, (uint32_t)nhash};
    memcpy(e->b->data + head + 1, c, sizeof c);
    return 0;
}

/* A host value: its handler's bytes under T_EXT, or the refusal of any userdata. */
static int enc_ext(enc *e, int idx)
{
    const sw_msg_ext *ext = atomic_load(&msg_ext);
    if (!ext) return fail_at(e, e->depth, "cannot send a userdata value");
    char why[200];
    sw_msgbuf bytes;
    sw_msgbuf_init(&bytes);
    int kind =
        ext->encode(e->L, idx < 0 ? lua_gettop(e->L) + idx + 1 : idx, &bytes, why, sizeof why);
    int rc = 0;
    if (kind <= 0)
        rc = fail_at(e, e->depth, "%s", kind == 0 ? "cannot send a userdata value" : why);
    else if (bytes.len > e->limit - e->b->len) rc = too_large(e);
    else if ((rc = room(e, bytes.len + 12)) == 0) {
        unsigned char *p = e->b->data + e->b->len;
        p[0] = T_EXT;
        p[1] = (unsigned char)kind;
        size_t h = 2 + sw_msg_varint(p + 2, bytes.len);
        if (bytes.len) memcpy(p + h, bytes.data, bytes.len);
        rc = wrote(e, h + bytes.len);
    }
    sw_msgbuf_free(&bytes);
    return rc;
}

/* Encodes the value at idx, of type t. */
static int enc_value(enc *e, int idx, int t)
{
    lua_State *L = e->L;
    size_t n;
    const char *s;
    switch (t) {
    case LUA_TNIL: return enc_byte(e, T_NIL);
    case LUA_TBOOLEAN: return enc_byte(e, lua_toboolean(L, idx) ? T_TRUE : T_FALSE);
    case LUA_TNUMBER: return enc_number(e, (double)lua_tonumber(L, idx));
    case LUA_TSTRING: s = lua_tolstring(L, idx, &n); return enc_string(e, s, n);
    case LUA_TTABLE: return enc_table(e, idx);
    case LUA_TUSERDATA: return enc_ext(e, idx);
    default: return fail_at(e, e->depth, "cannot send a %s value", type_name(L, t));
    }
}

int sw_msg_encode(lua_State *L, int first, int n, size_t limit, sw_msgbuf *out, char *err,
                  size_t errlen)
{
    enc e;
    e.L = L;
    e.b = out;
    e.limit = limit;
    e.err = err;
    e.errlen = errlen;
    e.n = n;
    e.which = 0;
    e.depth = 0;
    if (errlen > 0) err[0] = '\0';
    out->len = 0;
    int top = lua_gettop(L);
    if (first < 0 && first > LUA_REGISTRYINDEX) first = top + first + 1;
    if (n < 0 || (n > 0 && (first < 1 || first > top - n + 1))) {
        fail_at(&e, -1, "cannot send: bad value range");
        return -1;
    }
    int rc = room(&e, 11);
    if (rc == 0) {
        out->data[0] = MSG_VERSION;
        rc = wrote(&e, 1 + sw_msg_varint(out->data + 1, (uint64_t)n));
    }
    for (e.which = 0; rc == 0 && e.which < n; e.which++)
        rc = enc_value(&e, first + e.which, lua_type(L, first + e.which));
    lua_settop(L, top);
    if (rc) out->len = 0;
    return rc;
}

/* ---- decoding ---- */

typedef struct dec {
    lua_State *L;
    const unsigned char *p, *end;
} dec;

static int get_varint(dec *d, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (d->p == d->end) return -1;
        unsigned c = *d->p++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int dec_value(dec *d, int depth, int as_key);

static int dec_ext(dec *d)
{
    const sw_msg_ext *ext = atomic_load(&msg_ext);
    uint64_t len;
    if (!ext || d->p == d->end) return -1;
    int kind = *d->p++;
    if (get_varint(d, &len) || len > (uint64_t)(d->end - d->p) || !lua_checkstack(d->L, 4))
        return -1;
    const unsigned char *p = d->p;
    d->p += len;
    return ext->decode(d->L, kind, p, (size_t)len);
}

static int dec_table(dec *d, int depth)
{
    lua_State *L = d->L;
    uint32_t c[2];
    if (depth > SW_MSG_MAX_DEPTH || (size_t)(d->end - d->p) < sizeof c) return -1;
    memcpy(c, d->p, sizeof c);
    d->p += sizeof c;
    /* every array value takes a byte at least, every pair two */
    if ((uint64_t)c[0] + 2 * (uint64_t)c[1] > (uint64_t)(d->end - d->p) || c[0] > INT_MAX)
        return -1;
    if (!lua_checkstack(L, 3)) return -1;
    lua_createtable(L, (int)(c[0] < HINT_MAX ? c[0] : HINT_MAX),
                    (int)(c[1] < HINT_MAX ? c[1] : HINT_MAX));
    for (uint32_t i = 1; i <= c[0]; i++) {
        if (dec_value(d, depth, 0)) return -1;
        lua_rawseti(L, -2, (int)i);
    }
    for (uint32_t i = 0; i < c[1]; i++) {
        if (dec_value(d, depth, 1) || dec_value(d, depth, 0)) return -1;
        lua_rawset(L, -3);
    }
    return 0;
}

static int dec_string(dec *d, size_t n)
{
    if (n > (size_t)(d->end - d->p)) return -1;
    lua_pushlstring(d->L, (const char *)d->p, n);
    d->p += n;
    return 0;
}

/* Pushes one value; as_key refuses what cannot be a table key (nil, NaN, tables). */
static int dec_value(dec *d, int depth, int as_key)
{
    lua_State *L = d->L;
    uint64_t u;
    double x;
    if (d->p == d->end) return -1;
    unsigned tag = *d->p++;
    if (tag >= T_SMALLINT) {
        lua_pushnumber(L, (lua_Number)(tag - T_SMALLINT));
        return 0;
    }
    if (tag >= T_SHORTSTR) return dec_string(d, tag - T_SHORTSTR);
    switch (tag) {
    case T_NIL:
        if (as_key) return -1;
        lua_pushnil(L);
        return 0;
    case T_FALSE:
    case T_TRUE: lua_pushboolean(L, tag == T_TRUE); return 0;
    case T_DOUBLE:
        if ((size_t)(d->end - d->p) < sizeof x) return -1;
        memcpy(&x, d->p, sizeof x);
        d->p += sizeof x;
        if (as_key && isnan(x)) return -1;
        lua_pushnumber(L, (lua_Number)x);
        return 0;
    case T_INT:
        if (get_varint(d, &u)) return -1;
        lua_pushnumber(L, (lua_Number)(int64_t)((u >> 1) ^ (0 - (u & 1))));
        return 0;
    case T_STR:
        if (get_varint(d, &u) || u > SIZE_MAX) return -1;
        return dec_string(d, (size_t)u);
    case T_TABLE: return as_key ? -1 : dec_table(d, depth + 1);
    case T_EXT: return as_key ? -1 : dec_ext(d);
    default: return -1;
    }
}

int sw_msg_decode(lua_State *L, const unsigned char *data, size_t len)
{
    if (!data || len < 1 || data[0] != MSG_VERSION) return -1;
    dec d = {L, data + 1, data + len};
    int base = lua_gettop(L);
    uint64_t n;
    /* every value takes a byte at least */
    if (get_varint(&d, &n) || n > (uint64_t)(d.end - d.p) || n > INT_MAX / 2 ||
        !lua_checkstack(L, (int)n + 1))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        if (dec_value(&d, 0, 0)) {
            lua_settop(L, base);
            return -1;
        }
    }
    if (d.p != d.end) {
        lua_settop(L, base);
        return -1;
    }
    return (int)n;
}
