/* Lua `errors` (DESIGN §3, §4): structured error values that a process raises or returns.
 * An error value is a plain table {message = string, kind = string, retryable = boolean
 * [, details = any]} so that the host reads it with rawget and a copy sent in a message keeps
 * its meaning; a shared metatable (one per state, in the Lua registry, protected) only adds
 * __tostring. Defaults: kind "error", retryable true (only an explicit retryable = false makes
 * a failure terminal, §4).
 *   errors.new{message =, kind =, retryable =, details =} | errors.new(message) -> err
 *   errors.is(v [, kind]) -> boolean: v is an error value (of that kind); works on copies too
 * Methods named like the fields (err:message()) cannot exist: the plain field would shadow
 * them. tostring(err) is "kind: message", or the message alone when kind is "error". */
#include <lauxlib.h>
#include <string.h>

#include "api.h"

#define ERRORS_MT "steward.error"

/* Raw string field of the table at idx, or NULL. */
static const char *raw_string(lua_State *L, int idx, const char *key, size_t *len)
{
    lua_pushstring(L, key);
    lua_rawget(L, idx);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
    lua_pop(L, 1); /* still anchored by the table */
    return s;
}

static int l_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t mlen = 0, klen = 0;
    const char *msg = raw_string(L, 1, "message", &mlen);
    const char *kind = raw_string(L, 1, "kind", &klen);
    if (!msg) msg = "(no message)", mlen = strlen(msg);
    if (!kind || strcmp(kind, "error") == 0) {
        lua_pushlstring(L, msg, mlen);
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, kind, klen);
    luaL_addstring(&b, ": ");
    luaL_addlstring(&b, msg, mlen);
    luaL_pushresult(&b);
    return 1;
}

/* Reads the spec table at index 1 into the new error at index `err`. */
static void read_spec(lua_State *L, int err)
{
    bool has_message = false;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) luaL_argerror(L, 1, "keys must be message, kind, retryable or details");
        const char *key = lua_tostring(L, -2);
        int t = lua_type(L, -1);
        if (strcmp(key, "message") == 0) {
            if (t != LUA_TSTRING && t != LUA_TNUMBER) luaL_argerror(L, 1, "field 'message' must be a string");
            lua_tostring(L, -1); /* a number becomes a string (the stack copy, not the key) */
            has_message = true;
        } else if (strcmp(key, "kind") == 0) {
            if (t != LUA_TSTRING) luaL_argerror(L, 1, "field 'kind' must be a string");
        } else if (strcmp(key, "retryable") == 0) {
            if (t != LUA_TBOOLEAN) luaL_argerror(L, 1, "field 'retryable' must be a boolean");
        } else if (strcmp(key, "details") != 0) {
            lua_pushfstring(L, "unknown field '%s' (expected message, kind, retryable or details)", key);
            luaL_argerror(L, 1, lua_tostring(L, -1));
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, err);
    }
    if (!has_message) luaL_argerror(L, 1, "field 'message' must be a string");
}

static int l_new(lua_State *L)
{
    int t = lua_type(L, 1);
    if (t != LUA_TTABLE && t != LUA_TSTRING && t != LUA_TNUMBER) luaL_typerror(L, 1, "table or string");
    lua_createtable(L, 0, 4);
    int err = lua_gettop(L);
    lua_pushliteral(L, "error");
    lua_setfield(L, err, "kind");
    lua_pushboolean(L, 1);
    lua_setfield(L, err, "retryable");
    if (t == LUA_TTABLE) read_spec(L, err);
    else {
        lua_pushvalue(L, 1);
        lua_tostring(L, -1);
        lua_setfield(L, err, "message");
    }
    luaL_getmetatable(L, ERRORS_MT);
    lua_setmetatable(L, err);
    return 1;
}

static int l_is(lua_State *L)
{
    bool is = false;
    if (lua_type(L, 1) == LUA_TTABLE) {
        size_t len;
        const char *kind = raw_string(L, 1, "kind", &len);
        is = kind && raw_string(L, 1, "message", &len);
        if (is && !lua_isnoneornil(L, 2)) is = strcmp(kind, luaL_checkstring(L, 2)) == 0;
    }
    lua_pushboolean(L, is);
    return 1;
}

int sw_open_errors(lua_State *L)
{
    if (luaL_newmetatable(L, ERRORS_MT)) {
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushboolean(L, 0); /* getmetatable(err) is false; setmetatable refuses */
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, l_new);
    lua_setfield(L, -2, "new");
    lua_pushcfunction(L, l_is);
    lua_setfield(L, -2, "is");
    return 1;
}
