/* Lua `json` (docs/lua-api.md) over lua-cjson: one cjson instance per state, kept in the Lua registry
 * (user code never sees it), configured once: sparse arrays become objects, nesting is limited
 * to JSON_MAX_DEPTH both ways, NaN/inf/hex numbers are refused on decode, and no encode buffer
 * is kept between calls (it is malloc memory outside the state's memory limit).
 *   json.encode(v) -> string | nil, err      json.decode(s) -> value | nil, err
 *   json.null: a value that encodes as null (a lightuserdata: it cannot be sent in a message)
 * Neither function raises on bad input; only running out of memory is raised again.
 * JSON null decodes to nil: an object key with null is absent, a null in a list leaves a hole
 * (so json.decode("null") returns nil with no error). Decoded values hold only nil, booleans,
 * numbers, strings and tables, so they can always be sent in a message.
 * cjson's own rules: an empty table encodes as {}, numbers keep 14 significant digits, '/'
 * is written as "\/", strings are not checked for valid UTF-8. */
#include <lauxlib.h>
#include <pthread.h>

#include "api.h"

/* lua-cjson's opener (liblua5.1-cjson.a; declared here as in its <lua-cjson.h>, which sits in
 * /usr/include/lua5.1). The library uses only lua_* / luaL_* symbols, so it binds to LuaJIT. */
extern int luaopen_cjson(lua_State *L);

#define JSON_REG_KEY   "steward.cjson"
#define JSON_MAX_DEPTH 100

/* cjson's opener sets a process-wide static (fpconv_init's locale decimal point) each time it
 * runs: serialise it, since states are opened on several worker threads. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* Calls cjson[name](args) with the cjson table at t and the nargs arguments on top. */
static void call_setting(lua_State *L, int t, const char *name, int nargs)
{
    /* stack: ... args; the function goes below them */
    lua_getfield(L, t, name);
    lua_insert(L, -nargs - 1);
    lua_call(L, nargs, 0);
}

/* Pushes the state's configured cjson table, creating it on first use. */
static void push_cjson(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, JSON_REG_KEY);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_pushcfunction(L, luaopen_cjson);
    pthread_mutex_lock(&open_lock);
    int rc = lua_pcall(L, 0, 1, 0);
    pthread_mutex_unlock(&open_lock);
    if (rc != 0) lua_error(L);
    int t = lua_gettop(L);
    lua_pushboolean(L, 1);
    lua_pushinteger(L, 2);
    lua_pushinteger(L, 10);
    call_setting(L, t, "encode_sparse_array", 3);
    lua_pushinteger(L, JSON_MAX_DEPTH);
    call_setting(L, t, "encode_max_depth", 1);
    lua_pushinteger(L, JSON_MAX_DEPTH);
    call_setting(L, t, "decode_max_depth", 1);
    lua_pushboolean(L, 0);
    call_setting(L, t, "decode_invalid_numbers", 1);
    lua_pushboolean(L, 0);
    call_setting(L, t, "encode_invalid_numbers", 1);
    lua_pushboolean(L, 0);
    call_setting(L, t, "encode_keep_buffer", 1);
    lua_pushvalue(L, t);
    lua_setfield(L, LUA_REGISTRYINDEX, JSON_REG_KEY);
}

/* Calls the upvalue function with the argument at index 1 under pcall. Returns its result, or
 * nil and the message; an out-of-memory error is raised again (it ends the process, docs/lua-api.md). */
static int protected_call(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    int rc = lua_pcall(L, 1, 1, 0);
    if (rc == LUA_ERRMEM) lua_error(L);
    if (rc != 0) {
        lua_pushnil(L);
        lua_insert(L, -2);
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            lua_pushliteral(L, "json: unknown error");
        }
        return 2;
    }
    return 1;
}

static int l_encode(lua_State *L)
{
    lua_settop(L, 1);
    return protected_call(L);
}

/* Replaces every JSON null (cjson's NULL lightuserdata) in the table at t by nil. Depth is
 * bounded by decode_max_depth. */
static void drop_nulls(lua_State *L, int t)
{
    luaL_checkstack(L, 3, "json.decode");
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int vt = lua_type(L, -1);
        if (vt == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == NULL) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, t); /* clearing a present field is allowed during lua_next */
            continue;
        }
        if (vt == LUA_TTABLE) drop_nulls(L, lua_gettop(L));
        lua_pop(L, 1);
    }
}

static int l_decode(lua_State *L)
{
    lua_settop(L, 1);
    if (lua_type(L, 1) != LUA_TSTRING) {
        lua_pushnil(L);
        lua_pushfstring(L, "json.decode: expected a string, got %s", luaL_typename(L, 1));
        return 2;
    }
    int n = protected_call(L);
    if (n == 2) return 2;
    if (lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == NULL) {
        lua_pop(L, 1);
        lua_pushnil(L);
    } else if (lua_type(L, -1) == LUA_TTABLE) drop_nulls(L, lua_gettop(L));
    return 1;
}

int sw_open_json(lua_State *L)
{
    push_cjson(L);
    int cj = lua_gettop(L);
    lua_createtable(L, 0, 3);
    lua_getfield(L, cj, "encode");
    lua_pushcclosure(L, l_encode, 1);
    lua_setfield(L, -2, "encode");
    lua_getfield(L, cj, "decode");
    lua_pushcclosure(L, l_decode, 1);
    lua_setfield(L, -2, "decode");
    lua_getfield(L, cj, "null");
    lua_setfield(L, -2, "null");
    lua_remove(L, cj);
    return 1;
}
