/* Message objects (see mailbox.h): what a process receives from its inbox.
 * A message object holds the delivery's sender, topic and encoded payload. A small one is
 * copied into the userdata and the delivery freed at once: the object then needs no
 * finalizer, and objects with finalizers cost the collector a separate pass each. A large one
 * keeps the delivery and frees it in __gc, so its bytes stay outside the process's memory
 * limit until data() decodes them. Both kinds share the methods; each method has the two
 * metatables as upvalues, which makes checking its argument two pointer comparisons.
 * The metatables are made once per process and found again by registry refs kept in its
 * mailbox_out (an integer key, not a hash lookup per message). topic() and from() keep the
 * last string they returned as their third upvalue: a process mostly hears the same topics
 * from the same peers, so most calls push that string again instead of interning a new one. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "mailbox.h"
#include "message.h"
#include "pidtable.h"
#include "proc.h"


#define MSG_INLINE_MAX 512 /* topic + payload bytes copied into the object */

typedef struct msg_obj {
    sw_delivery *owned; /* large: the delivery, freed by __gc; small: NULL */
    uint64_t from;
    uint16_t len;   /* small: the payload's length (large: owned->len) */
    uint16_t tlen;  /* small: the topic's length without its NUL (large: strlen(owned->topic)) */
    bool has_topic; /* small: the topic is at bytes; large: at owned->topic */
    unsigned char bytes[]; /* small: topic (NUL-terminated), then payload */
} msg_obj;                 /* kept small: every message is garbage for the collector to sweep */

_Static_assert(MSG_INLINE_MAX <= UINT16_MAX, "a small message's lengths fit msg_obj's fields");

/* The payload of m and its length. */
static const unsigned char *msg_payload_of(const msg_obj *m, size_t *len)
{
    if (m->owned) {
        *len = m->owned->len;
        return m->owned->payload;
    }
    *len = m->len;
    return m->bytes + (m->has_topic ? m->tlen + 1 : 0);
}

static msg_obj *check_msg(lua_State *L)
{
    msg_obj *m = lua_touserdata(L, 1);
    if (m && lua_getmetatable(L, 1)) {
        int ok =
            lua_rawequal(L, -1, lua_upvalueindex(1)) || lua_rawequal(L, -1, lua_upvalueindex(2));
        lua_pop(L, 1);
        if (ok) return m;
    }
    luaL_typerror(L, 1, "message");
    return NULL;
}

static const char *msg_topic_of(const msg_obj *m)
{
    if (!m->has_topic) return NULL;
    return m->owned ? m->owned->topic : (const char *)m->bytes;
}

/* Pushes the string s[0..n) from the cache in upvalue 3 when it holds it, else a new one that
 * then replaces the cache. */
static void push_cached(lua_State *L, const char *s, size_t n)
{
    size_t cn;
    const char *c = lua_tolstring(L, lua_upvalueindex(3), &cn); /* nil or a string */
    if (c && cn == n && memcmp(c, s, n) == 0) {
        lua_pushvalue(L, lua_upvalueindex(3));
        return;
    }
    lua_pushlstring(L, s, n);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(3));
}

static int msg_topic(lua_State *L)
{
    msg_obj *m = check_msg(L);
    const char *topic = msg_topic_of(m);
    if (topic) push_cached(L, topic, m->owned ? strlen(topic) : m->tlen);
    else lua_pushnil(L);
    return 1;
}

/* The cache holds the pid string of mailbox_out.from_cached: compared by id, not formatted. */
static int msg_from(lua_State *L)
{
    msg_obj *m = check_msg(L);
    sw_mailbox_out *o = &sw_proc_of(L)->mailbox_out;
    if (o->from_cached == m->from && !lua_isnil(L, lua_upvalueindex(3))) {
        lua_pushvalue(L, lua_upvalueindex(3));
        return 1;
    }
    char pid[32];
    sw_pid_format(m->from, pid, sizeof pid);
    lua_pushstring(L, pid);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(3));
    o->from_cached = m->from;
    return 1;
}

static int msg_payload(lua_State *L)
{
    check_msg(L);
    lua_settop(L, 1);
    return 1; /* the payload is the message itself: payload():data() and data() agree */
}

static int msg_data(lua_State *L)
{
    size_t len;
    const unsigned char *payload = msg_payload_of(check_msg(L), &len);
    int n = sw_msg_decode(L, payload, len);
    if (n < 0) return luaL_error(L, "corrupt message");
    return n;
}

static int msg_gc(lua_State *L)
{
    msg_obj *m = lua_touserdata(L, 1);
    if (m->owned) sw_mailbox_release(sw_proc_of(L), m->owned);
    free(m->owned);
    m->owned = NULL;
    return 0;
}

/* Makes the small and the large messages' metatables and keeps them in o's refs. */
static void make_msg_metatables(lua_State *L, sw_mailbox_out *o)
{
    static const luaL_Reg methods[] = {{"topic", msg_topic},
                                       {"from", msg_from},
                                       {"payload", msg_payload},
                                       {"data", msg_data},
                                       {NULL, NULL}};
    lua_createtable(L, 0, 2);
    lua_createtable(L, 0, 3);
    lua_createtable(L, 0, 4); /* the methods */
    for (const luaL_Reg *r = methods; r->name; r++) {
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_pushnil(L); /* the cache of topic() and from() */
        lua_pushcclosure(L, r->func, 3);
        lua_setfield(L, -2, r->name);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "__index");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, msg_gc);
    lua_setfield(L, -2, "__gc");
    for (int i = -2; i <= -1; i++) {
        lua_pushliteral(L, "message");
        lua_setfield(L, i - 1, "__metatable");
    }
    o->msg_mt_ref[1] = luaL_ref(L, LUA_REGISTRYINDEX);
    o->msg_mt_ref[0] = luaL_ref(L, LUA_REGISTRYINDEX);
}

static bool msg_small(const sw_delivery *d)
{
    return (size_t)(d->payload - d->data) + d->len <= MSG_INLINE_MAX;
}

void sw_message_push(sw_proc *p, lua_State *L, sw_delivery *d)
{
    sw_mailbox_out *o = &p->mailbox_out;
    if (!o->msg_mt_ref[0]) make_msg_metatables(L, o);
    size_t tlen = (size_t)(d->payload - d->data); /* the topic and its NUL, or 0 */
    bool small = msg_small(d);
    msg_obj *m = lua_newuserdata(L, sizeof *m + (small ? tlen + d->len : 0));
    m->owned = NULL; /* until set, a collection frees nothing */
    lua_rawgeti(L, LUA_REGISTRYINDEX, o->msg_mt_ref[!small]);
    lua_setmetatable(L, -2);
    m->from = d->from;
    m->has_topic = d->topic != NULL;
    if (small) {
        m->len = (uint16_t)d->len;
        m->tlen = (uint16_t)(tlen ? tlen - 1 : 0);
        memcpy(m->bytes, d->data, tlen + d->len); /* topic then payload, as in the delivery */
        free(d);
    } else {
        m->len = m->tlen = 0;
        m->owned = d;
        sw_mailbox_hold(p, d);
    }
}
