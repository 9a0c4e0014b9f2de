/* Message payloads: deep copies of Lua values in a self-contained byte buffer.
 * Encoding reads one lua_State, decoding writes another; the buffer in between holds no
 * pointers into either, so it may cross threads freely (it is plain malloc'd memory).
 * Builds on the Lua 5.1 C API only (raw access, no metamethods). */
#ifndef SW_MESSAGE_H
#define SW_MESSAGE_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>

#include "yaml_tree.h"

/* Tables nested deeper than this are refused by encode and treated as corrupt by decode. */
#define SW_MSG_MAX_DEPTH 100

/* A growable byte buffer. Caller-owned; reuse it across encodes to avoid allocations.
 * data is malloc'd (NULL until the first encode): to keep an encoded message, either copy
 * data[0..len) or take data over (then sw_msgbuf_init the struct instead of freeing it). */
typedef struct sw_msgbuf {
    unsigned char *data;
    size_t len, cap;
} sw_msgbuf;

/* Writes v as a varint (7 bits a byte, low first; the high bit: more follow) at out, which
 * has room for 10 bytes; returns how many it wrote (1..10). The codec's lengths and counts. */
static inline size_t sw_msg_varint(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (unsigned char)v;
    return n;
}

/* Sets *b to empty. Cannot fail. */
void sw_msgbuf_init(sw_msgbuf *b);
/* Frees b's memory and leaves it empty (reusable). Safe on an empty or freed buffer. */
void sw_msgbuf_free(sw_msgbuf *b);

/* Encodes the n (>= 0) values at stack indexes first..first+n-1 of L (first may be negative,
 * relative to the top) into out, replacing its contents.
 * What is accepted: nil, booleans, numbers, strings, and tables of those. Table keys may be
 * booleans, numbers or strings; a table used as a key is refused. Metatables are not copied
 * and never consulted (raw access only: no __index, __pairs, __len). A table reachable twice
 * without a cycle (t = {a = x, b = x}) is copied at each occurrence: the receiver gets two
 * distinct, equal tables (Erlang semantics). Refused: a cycle, a function, userdata, light
 * userdata, thread or cdata anywhere, nesting deeper than SW_MSG_MAX_DEPTH, and an encoded
 * size over limit bytes (pass SIZE_MAX for none).
 * Returns 0, or -1 with a one-line message in err (errlen bytes, always terminated when
 * errlen > 0), e.g. "cannot send a function value (at payload.x.y)"; out->len is then 0.
 * The path names the single value "payload", or "payload#i" when n > 1.
 * L's stack is unchanged on return. Raises no Lua error, except that growing L's stack for
 * deeply nested tables may raise L's own out-of-memory error (no C memory is held then;
 * out keeps its allocation and must still be freed by its owner).
 * Thread: the one running L. */
int sw_msg_encode(lua_State *L, int first, int n, size_t limit, sw_msgbuf *out, char *err,
                  size_t errlen);

/* Host values that cross as copies: userdata whose maker writes them out and rebuilds them on
 * arrival, re-validated there (actors and scopes, docs/security.md "Identities at run time").
 * Only the encoder writes their tag, so no table can pass for one. */
typedef struct sw_msg_ext {
    /* Appends the bytes of the userdata at idx (a positive index) to out; returns its kind
     * (1..255), 0 when it is no value it knows (refused as any userdata), or -1 with err. */
    int (*encode)(lua_State *L, int idx, sw_msgbuf *out, char *err, size_t errlen);
    /* Pushes the value of kind made from p[0..len): 0, or -1 (nothing pushed) when the bytes
     * are not one (the message is then corrupt). May raise L's out-of-memory error only. */
    int (*decode)(lua_State *L, int kind, const unsigned char *p, size_t len);
} sw_msg_ext;

/* Sets the codec's handler of host values, once, before any process runs (the composition
 * root's bindings do). Without one (NULL, the default) every userdata is refused. */
void sw_msg_set_ext(const sw_msg_ext *ext);

/* Pushes the values encoded in data[0..len) onto L and returns how many, or returns -1 if
 * the buffer is corrupt, truncated, or holds more values than L's stack can take; L's stack
 * is then as it was. Corrupt input never raises and never reads outside data[0..len).
 * Allocation failure (L's memory limit) raises L's usual out-of-memory error, so call this
 * from a lua_CFunction running in L or under lua_pcall/lua_cpcall (not on a suspended
 * coroutine); nothing leaks then, as decode holds no C memory.
 * Thread: the one running L; data is only read. */
int sw_msg_decode(lua_State *L, const unsigned char *data, size_t len);

/* Pushes the Lua value of a YAML node (nil for null or NULL; a map's null values and a
 * sequence's null items are left out). Raises on a stack overflow (nesting). */
void sw_push_node(lua_State *L, const sw_node *n);
/* Encodes the items of a YAML sequence (NULL or empty: no values) as the values of one
 * message, as sw_msg_encode would from the Lua values. 0, or -1 with err. Thread: any. */
int sw_msg_encode_nodes(const sw_node *seq, sw_msgbuf *out, char *err, size_t errlen);
/* The same for n nodes given one by one (a NULL node is a nil value). */
int sw_msg_encode_node_values(const sw_node *const *v, size_t n, sw_msgbuf *out, char *err,
                              size_t errlen);

#endif
