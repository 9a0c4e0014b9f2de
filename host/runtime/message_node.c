/* Registry data as Lua values and as messages: what registry.get returns, a service's
 * `input` given to its main, an actor's meta. */
#include <lauxlib.h>
#include <stdio.h>

#include "message.h"

void sw_push_node(lua_State *L, const sw_node *n)
{
    luaL_checkstack(L, 3, "registry: entry too deep");
    if (!n) {
        lua_pushnil(L);
        return;
    }
    switch (n->type) {
    case SW_NODE_SCALAR:
        switch (n->scalar) {
        case SW_SCALAR_NULL: lua_pushnil(L); break;
        case SW_SCALAR_BOOL: lua_pushboolean(L, n->num != 0); break;
        case SW_SCALAR_INT:
        case SW_SCALAR_FLOAT: lua_pushnumber(L, n->num); break;
        default: lua_pushlstring(L, n->str, n->len);
        }
        break;
    case SW_NODE_MAP:
        lua_createtable(L, 0, (int)n->n);
        for (size_t i = 0; i < n->n; i++) {
            const sw_node *k = sw_node_key(n, i), *v = sw_node_val(n, i);
            if (k->type != SW_NODE_SCALAR || !v) continue;
            if (v->type == SW_NODE_SCALAR && v->scalar == SW_SCALAR_NULL) continue;
            lua_pushlstring(L, k->str, k->len);
            sw_push_node(L, v);
            lua_rawset(L, -3);
        }
        break;
    case SW_NODE_SEQ:
        lua_createtable(L, (int)n->n, 0);
        for (size_t i = 0; i < n->n; i++) {
            const sw_node *v = n->kids[i];
            if (!v || (v->type == SW_NODE_SCALAR && v->scalar == SW_SCALAR_NULL)) continue;
            sw_push_node(L, v);
            lua_rawseti(L, -2, (int)i + 1);
        }
        break;
    }
}

int sw_msg_encode_node_values(const sw_node *const *v, size_t n, sw_msgbuf *out, char *err,
                              size_t errlen)
{
    sw_msgbuf_init(out);
    if (n == 0) return 0;
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) sw_push_node(L, v[i]);
    int rc = sw_msg_encode(L, 1, (int)n, (size_t)64 << 20, out, err, errlen);
    lua_close(L);
    return rc;
}

int sw_msg_encode_nodes(const sw_node *seq, sw_msgbuf *out, char *err, size_t errlen)
{
    return sw_msg_encode_node_values(seq ? (const sw_node *const *)seq->kids : NULL,
                                     seq ? seq->n : 0, out, err, errlen);
}
