/* The message codec's host values (sw_api_identity_ext, set by sw_api_use): actors and scopes
 * cross in messages as copies. An actor is written as its id and its meta (a message of one
 * table) and made again on arrival; a scope as its policy ids and group, rebuilt on arrival
 * under the receiver's policy set. */
#include "api_identity.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_identity_internal.h"
#include "message.h"

enum { EXT_ACTOR = 1, EXT_SCOPE = 2 };

static int put(sw_msgbuf *b, const void *data, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len < n) cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) return -1;
        b->data = p;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
    return 0;
}

static int put_str(sw_msgbuf *b, const char *s, size_t n)
{
    unsigned char v[10];
    return put(b, v, sw_msg_varint(v, n)) || put(b, s, n) ? -1 : 0;
}

static bool get_str(const unsigned char **p, const unsigned char *end, const char **s, size_t *n)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        if (*p == end || shift > 63) return false;
        unsigned c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) break;
    }
    if (v > (uint64_t)(end - *p)) return false;
    *s = (const char *)*p;
    *n = (size_t)v;
    *p += v;
    return true;
}

/* An actor: its id, then its meta as a message of one table (nothing when it has none). */
static int encode_actor(lua_State *L, const sw_sec_actor *a, sw_msgbuf *out, char *err,
                        size_t errlen)
{
    if (put_str(out, a->id, a->id_len))
        return snprintf(err, errlen, "cannot send: out of memory"), -1;
    if (!a->meta) return EXT_ACTOR;
    sw_push_node(L, a->meta);
    sw_msgbuf meta;
    sw_msgbuf_init(&meta);
    int rc = sw_msg_encode(L, -1, 1, SIZE_MAX, &meta, err, errlen);
    lua_pop(L, 1);
    if (rc == 0 && put(out, meta.data, meta.len)) rc = -1;
    sw_msgbuf_free(&meta);
    return rc == 0 ? EXT_ACTOR : -1;
}

/* A scope: its policy count and ids, then its group ("" for none). */
static int encode_scope(const sw_sec_scope *s, sw_msgbuf *out)
{
    char n[16];
    int len = snprintf(n, sizeof n, "%zu", s->n);
    int rc = put_str(out, n, (size_t)len);
    for (size_t i = 0; i < s->n && rc == 0; i++) rc = put_str(out, s->ids[i], strlen(s->ids[i]));
    if (rc == 0) rc = put_str(out, s->group ? s->group : "", s->group ? strlen(s->group) : 0);
    return rc == 0 ? EXT_SCOPE : -1;
}

static int ext_encode(lua_State *L, int idx, sw_msgbuf *out, char *err, size_t errlen)
{
    actor_ud *a = sw_api_toudata(L, idx, &identity_actor_mt_key);
    if (a) return encode_actor(L, a->a, out, err, errlen);
    scope_ud *s = sw_api_toudata(L, idx, &identity_scope_mt_key);
    if (s) {
        int rc = encode_scope(s->s, out);
        if (rc < 0) snprintf(err, errlen, "cannot send: out of memory");
        return rc;
    }
    return 0;
}

static int decode_actor(lua_State *L, const unsigned char *p, const unsigned char *end)
{
    const char *id, *err = NULL;
    size_t len;
    if (!get_str(&p, end, &id, &len) || len == 0 || len >= ID_MAX || memchr(id, 0, len)) return -1;
    int top = lua_gettop(L);
    if (p != end && (sw_msg_decode(L, p, (size_t)(end - p)) != 1 || !lua_istable(L, -1))) {
        lua_settop(L, top);
        return -1;
    }
    sw_sec_actor *a = identity_make_actor(L, id, len, top + 1, &err); /* the meta table, or none */
    lua_settop(L, top);
    if (!a) return -1;
    identity_push_actor(L, a);
    return 0;
}

static int decode_scope(lua_State *L, const unsigned char *p, const unsigned char *end)
{
    const char *s;
    size_t len;
    char count[16];
    if (!get_str(&p, end, &s, &len) || len == 0 || len >= sizeof count) return -1;
    memcpy(count, s, len);
    count[len] = '\0';
    long n = strtol(count, NULL, 10);
    if (n < 0 || n > SCOPE_MAX || !lua_checkstack(L, (int)n + 2)) return -1;
    const char *ids[SCOPE_MAX + 1];
    int top = lua_gettop(L);
    for (long i = 0; i <= n; i++) { /* the ids, then the group */
        if (!get_str(&p, end, &s, &len) || memchr(s, 0, len)) return lua_settop(L, top), -1;
        lua_pushlstring(L, s, len);
        ids[i] = lua_tostring(L, -1);
    }
    if (p != end) return lua_settop(L, top), -1;
    sw_security_set *set = identity_current_set(L);
    sw_sec_scope *sc = sw_sec_scope_rebuild(set, ids, (size_t)n, ids[n][0] ? ids[n] : NULL);
    sw_security_release(set);
    lua_settop(L, top);
    identity_push_scope(L, sc);
    return 0;
}

static int ext_decode(lua_State *L, int kind, const unsigned char *p, size_t len)
{
    switch (kind) {
    case EXT_ACTOR: return decode_actor(L, p, p + len);
    case EXT_SCOPE: return decode_scope(L, p, p + len);
    default: return -1;
    }
}

const sw_msg_ext sw_api_identity_ext = {ext_encode, ext_decode};
