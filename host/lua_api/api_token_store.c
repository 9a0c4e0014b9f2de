/* Token stores in Lua (docs/security.md "Identities at run time"): security.token_store(id)
 * -> store, whose :create(actor, scope, {ttl =}?) mints a token for an identity,
 * :validate(token) gives it back as an actor and a scope, and :revoke(token) ends it; each
 * after the caller's context allowed it (security.token.create / validate / revoke on the
 * store's id). The stores are the host's (sw_token_store), shared by every process. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "api_identity_internal.h"
#include "proc.h"
#include "runtime.h"

static const char store_mt_key = 0;

typedef struct store_ud {
    sw_token_store *ts;
    char id[ID_MAX];
} store_ud;

static store_ud *check_store(lua_State *L)
{
    return sw_api_checkudata(L, 1, &store_mt_key, "token store");
}

static int store_gc(lua_State *L)
{
    (void)L; /* the store is the host's: it outlives every process */
    return 0;
}

/* ts:create(actor, scope, {ttl = duration}?) -> token */
static int ts_create(lua_State *L)
{
    store_ud *u = check_store(L);
    sw_sec_actor *a = identity_check_actor(L, 2);
    sw_sec_scope *s = identity_check_scope(L, 3);
    int64_t ttl = 0;
    if (lua_type(L, 4) == LUA_TTABLE) {
        lua_getfield(L, 4, "ttl");
        if (!lua_isnil(L, -1) && (ttl = sw_api_to_duration(L, -1)) <= 0)
            return luaL_argerror(L, 4,
                                 "ttl must be a positive duration (\"30s\", \"1h\" or seconds)");
        lua_pop(L, 1);
    } else if (!lua_isnoneornil(L, 4)) {
        return luaL_typerror(L, 4, "table or nil");
    }
    const char *policy;
    if (!sw_api_may_mint(L, "security.token.create", u->id, &policy)) return 2;
    sw_sec_identity *id = sw_sec_identity_new(a, s);
    char token[SW_TOKEN_LEN + 1], err[64], names[512];
    int rc = sw_token_create(u->ts, id, ttl, token, err, sizeof err);
    sw_sec_identity_release(id);
    if (rc != 0) return sw_api_fail(L, err);
    lua_pushstring(L, token);
    sw_api_audit(L, "identity minted", "security.token.create", u->id, policy, a->id,
                 identity_scope_list(s, names, sizeof names));
    return 1;
}

static const char *check_token(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    return lua_tolstring(L, idx, len);
}

/* ts:validate(token) -> actor, scope | nil, "invalid token" */
static int ts_validate(lua_State *L)
{
    store_ud *u = check_store(L);
    size_t len;
    const char *token = check_token(L, 2, &len);
    if (!sw_api_may_mint(L, "security.token.validate", u->id, NULL)) return 2;
    sw_sec_identity *id = sw_token_validate(u->ts, token, len);
    if (!id) return sw_api_fail(L, "invalid token");
    lua_checkstack(L, 4);
    identity_push_actor(L, sw_sec_actor_retain(id->actor));
    identity_push_scope(L, sw_sec_scope_retain(id->scope));
    sw_sec_identity_release(id);
    return 2;
}

/* ts:revoke(token) -> true (it was live) | false */
static int ts_revoke(lua_State *L)
{
    store_ud *u = check_store(L);
    size_t len;
    const char *token = check_token(L, 2, &len);
    if (!sw_api_may_mint(L, "security.token.revoke", u->id, NULL)) return 2;
    lua_pushboolean(L, sw_token_revoke(u->ts, token, len));
    return 1;
}

static void store_mt_init(lua_State *L)
{
    static const luaL_Reg m[] = {
        {"create", ts_create}, {"validate", ts_validate}, {"revoke", ts_revoke}, {NULL, NULL}};
    identity_methods_mt(L, m, store_gc, NULL);
}

/* security.token_store(id) -> store | nil, "no security.token_store ID" */
int identity_token_store(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    size_t len;
    char buf[ID_MAX + 64];
    const char *id = identity_qualify(L, identity_check_id(L, 1, &len), buf, sizeof buf);
    const sw_entry *e = sw_registry_get(p->ctx.registry, id);
    if (!e || e->kind != SW_KIND_TOKEN_STORE || strlen(id) >= ID_MAX)
        return lua_pushnil(L), lua_pushfstring(L, "no security.token_store %s", id), 2;
    sw_token_store *ts = p->rt->tokens ? sw_token_store_of(p->rt->tokens, e) : NULL;
    if (!ts) return sw_api_fail(L, "out of memory");
    store_ud *u = lua_newuserdata(L, sizeof *u);
    u->ts = ts;
    snprintf(u->id, sizeof u->id, "%s", id);
    sw_api_push_metatable(L, &store_mt_key, store_mt_init);
    lua_setmetatable(L, -2);
    return 1;
}
