/* Run-time identities in Lua (docs/security.md "Identities at run time"):
 *   security.new_actor(id, meta?)        -> actor (:id(), :meta())  | nil, err
 *   security.new_scope({policy ids})     -> scope (:evaluate(), :policies()) | nil, err
 *   security.named_scope(group)          -> scope | nil, err
 *   security.token_store(id)             -> store (:create(), :validate(), :revoke()) | nil, err
 *   process.with_context{actor =, scope =} -> object with :spawn*(...) and :call(...)
 * Actors and scopes are userdata over the engine's immutable, reference-counted values
 * (security_identity.h); only the functions here make them, each after the caller's context
 * allowed it (security.impersonate on the actor id, security.scope on each policy id or the
 * group). They cross in messages as copies (the codec's host values, sw_api_identity_ext): an
 * actor keeps its id and meta; a scope is made again from its policy ids on arrival, under the
 * receiver's policy set. A table that looks like one is just a table.
 * This file: actors, scopes, process.with_context and the security functions' registration;
 * token stores are in api_token_store.c, the codec's host values in api_identity_codec.c,
 * what they share in api_identity_internal.h. */
#include "api_identity.h"

#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "api.h"
#include "api_identity_internal.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"

#define META_MAX_DEPTH 16   /* actor meta: nesting */
#define META_MAX_NODES 1024 /* actor meta: values, tables included */

const char identity_actor_mt_key = 0, identity_scope_mt_key = 0;
static const char ctx_mt_key = 0, anchor_key = 0;

typedef struct ctx_ud {
    sw_sec_identity *id;
} ctx_ud;

/* A string argument for an id: no NUL, 1..ID_MAX-1 bytes; raises otherwise. */
const char *identity_check_id(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    const char *s = lua_tolstring(L, idx, len);
    if (*len == 0 || *len >= ID_MAX || memchr(s, 0, *len))
        luaL_argerror(L, idx, "must be 1 to 255 bytes without NUL");
    return s;
}

/* id in the caller's namespace when it has no colon, as process.spawn does. */
const char *identity_qualify(lua_State *L, const char *id, char *buf, size_t size)
{
    if (strchr(id, ':')) return id;
    snprintf(buf, size, "%s:%s", sw_proc_of(L)->entry->ns, id);
    return buf;
}

static bool listed(const char *list, const char *s)
{
    size_t len = strlen(s);
    for (const char *p = list; (p = strstr(p, s)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return true;
    return false;
}

/* Appends s to a comma-separated list in buf, once (cut when full): the audit's lists. */
static void join(char *buf, size_t size, const char *s)
{
    size_t n = strlen(buf);
    if (!s || n + 2 >= size || listed(buf, s)) return;
    snprintf(buf + n, size - n, "%s%s", n ? "," : "", s);
}

/* ---- actor meta: a Lua table as the YAML-node tree the engine reads ---- */

typedef struct meta_build {
    lua_State *L;
    sw_arena *arena;
    size_t nodes;
    const char *err;
} meta_build;

static sw_node *meta_node(meta_build *b, int idx, int depth);

/* Whether the table at idx is a list 1..n; *count: its entries (counting stops past the
 * bound on meta values, so a huge table costs no more than a fitting one). */
static bool is_sequence(lua_State *L, int idx, size_t *count)
{
    size_t n = 0;
    bool seq = true;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        n++;
        seq = seq && lua_type(L, -2) == LUA_TNUMBER;
        lua_pop(L, n > META_MAX_NODES ? 2 : 1);
        if (n > META_MAX_NODES) break;
    }
    *count = n;
    return n > 0 && seq && lua_objlen(L, idx) == n;
}

static sw_node *meta_table(meta_build *b, int idx, int depth)
{
    lua_State *L = b->L;
    if (depth >= META_MAX_DEPTH) return b->err = "nested deeper than 16 levels", NULL;
    if (!lua_checkstack(L, 4)) return b->err = "nested too deep", NULL;
    size_t n;
    bool seq = is_sequence(L, idx, &n);
    if (b->nodes + n > META_MAX_NODES) return b->err = "more than 1024 values", NULL;
    sw_node *t = sw_arena_alloc(b->arena, sizeof *t);
    t->type = seq ? SW_NODE_SEQ : SW_NODE_MAP;
    t->n = n;
    t->kids = sw_arena_alloc(b->arena, (seq ? n : 2 * n) * sizeof *t->kids + 1);
    for (size_t i = 0; seq && i < n; i++) {
        lua_rawgeti(L, idx, (int)i + 1);
        t->kids[i] = meta_node(b, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
        if (!t->kids[i]) return NULL;
    }
    if (seq) return t;
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            return lua_pop(L, 2), b->err = "keys must be strings", NULL;
        t->kids[k++] = meta_node(b, lua_gettop(L) - 1, depth + 1);
        t->kids[k++] = meta_node(b, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
        if (!t->kids[k - 1] || !t->kids[k - 2]) return lua_pop(L, 1), NULL;
    }
    return t;
}

static sw_node *meta_node(meta_build *b, int idx, int depth)
{
    lua_State *L = b->L;
    if (++b->nodes > META_MAX_NODES) return b->err = "more than 1024 values", NULL;
    int t = lua_type(L, idx);
    if (t == LUA_TTABLE) return meta_table(b, idx, depth);
    sw_node *n = sw_arena_alloc(b->arena, sizeof *n);
    n->type = SW_NODE_SCALAR;
    n->str = "";
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        n->scalar = SW_SCALAR_STRING;
        n->str = sw_arena_strndup(b->arena, s, len);
        n->len = len;
        return n;
    }
    case LUA_TNUMBER:
        n->num = lua_tonumber(L, idx);
        n->scalar =
            n->num == floor(n->num) && fabs(n->num) < 9e15 ? SW_SCALAR_INT : SW_SCALAR_FLOAT;
        return n;
    case LUA_TBOOLEAN:
        n->scalar = SW_SCALAR_BOOL;
        n->num = lua_toboolean(L, idx);
        return n;
    default: return b->err = "values must be strings, numbers, booleans or tables", NULL;
    }
}

/* An actor of id with the meta table at idx (or none); NULL with *err when meta is not one. */
sw_sec_actor *identity_make_actor(lua_State *L, const char *id, size_t len, int meta_idx,
                                  const char **err)
{
    sw_sec_actor *a = sw_sec_actor_new(id, len);
    if (lua_type(L, meta_idx) != LUA_TTABLE) return a;
    meta_build b = {L, &a->arena, 0, NULL};
    a->meta = meta_table(&b, meta_idx, 0);
    if (a->meta) return a;
    *err = b.err;
    sw_sec_actor_release(a);
    return NULL;
}

/* ---- actors ---- */

sw_sec_actor *sw_api_to_actor(lua_State *L, int idx)
{
    actor_ud *u = sw_api_toudata(L, idx, &identity_actor_mt_key);
    return u ? u->a : NULL;
}

sw_sec_actor *identity_check_actor(lua_State *L, int idx)
{
    sw_sec_actor *a = sw_api_to_actor(L, idx);
    if (!a) luaL_typerror(L, idx, "actor");
    return a;
}

static int actor_id(lua_State *L)
{
    sw_sec_actor *a = identity_check_actor(L, 1);
    lua_pushlstring(L, a->id, a->id_len);
    return 1;
}

/* A fresh copy every call: changing it changes nothing the engine reads. */
static int actor_meta(lua_State *L)
{
    sw_sec_actor *a = identity_check_actor(L, 1);
    if (a->meta) sw_push_node(L, a->meta);
    else lua_newtable(L);
    return 1;
}

static int actor_tostring(lua_State *L)
{
    lua_pushfstring(L, "actor: %s", identity_check_actor(L, 1)->id);
    return 1;
}

static int actor_gc(lua_State *L)
{
    actor_ud *u = lua_touserdata(L, 1);
    sw_sec_actor_release(u->a);
    u->a = NULL;
    return 0;
}

void identity_methods_mt(lua_State *L, const luaL_Reg *methods, lua_CFunction gc,
                         lua_CFunction tostring)
{
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    if (tostring) {
        lua_pushcfunction(L, tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

static void actor_mt_init(lua_State *L)
{
    static const luaL_Reg m[] = {{"id", actor_id}, {"meta", actor_meta}, {NULL, NULL}};
    identity_methods_mt(L, m, actor_gc, actor_tostring);
}

/* Pushes an actor value taking over the caller's reference to a. */
void identity_push_actor(lua_State *L, sw_sec_actor *a)
{
    actor_ud *u = lua_newuserdata(L, sizeof *u);
    u->a = NULL;
    sw_api_push_metatable(L, &identity_actor_mt_key, actor_mt_init);
    lua_setmetatable(L, -2);
    u->a = a;
}

/* security.new_actor(id, meta?) */
static int l_new_actor(lua_State *L)
{
    size_t len;
    const char *id = identity_check_id(L, 1, &len);
    int t = lua_type(L, 2);
    if (t != LUA_TNONE && t != LUA_TNIL && t != LUA_TTABLE) luaL_typerror(L, 2, "table or nil");
    const char *policy;
    if (!sw_api_may_mint(L, "security.impersonate", id, &policy)) return 2;
    const char *err = NULL;
    sw_sec_actor *a = identity_make_actor(L, id, len, 2, &err);
    if (!a) return luaL_argerror(L, 2, lua_pushfstring(L, "meta: %s", err));
    identity_push_actor(L, a);
    sw_api_audit(L, "identity minted", "security.impersonate", id, policy, NULL, NULL);
    return 1;
}

/* ---- scopes ---- */

static void scope_mt_init(lua_State *L);

void identity_push_scope(lua_State *L, sw_sec_scope *s)
{
    scope_ud *u = lua_newuserdata(L, sizeof *u);
    u->s = NULL;
    sw_api_push_metatable(L, &identity_scope_mt_key, scope_mt_init);
    lua_setmetatable(L, -2);
    u->s = s;
}

sw_sec_scope *sw_api_to_scope(lua_State *L, int idx)
{
    scope_ud *u = sw_api_toudata(L, idx, &identity_scope_mt_key);
    if (!u) return NULL;
    sw_runtime *rt = sw_proc_of(L)->rt;
    if (atomic_load_explicit(&rt->security, memory_order_acquire) == u->s->set) return u->s;
    /* After a reload: the same ids under the current set (kept, so this happens once). */
    sw_security_set *now = sw_runtime_security(rt);
    sw_sec_scope *fresh = sw_sec_scope_bind(u->s, now);
    sw_security_release(now);
    sw_sec_scope_release(u->s);
    u->s = fresh;
    return fresh;
}

sw_sec_scope *identity_check_scope(lua_State *L, int idx)
{
    sw_sec_scope *s = sw_api_to_scope(L, idx);
    if (!s) luaL_typerror(L, idx, "scope");
    return s;
}

static int scope_policies(lua_State *L)
{
    sw_sec_scope *s = identity_check_scope(L, 1);
    lua_createtable(L, (int)s->n, 0);
    for (size_t i = 0; i < s->n; i++) {
        lua_pushstring(L, s->ids[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
    return 1;
}

static int scope_tostring(lua_State *L)
{
    sw_sec_scope *s = identity_check_scope(L, 1);
    if (s->group) lua_pushfstring(L, "scope: group %s", s->group);
    else lua_pushfstring(L, "scope: %d policies", (int)s->n);
    return 1;
}

static int scope_gc(lua_State *L)
{
    scope_ud *u = lua_touserdata(L, 1);
    sw_sec_scope_release(u->s);
    u->s = NULL;
    return 0;
}

static void scope_mt_init(lua_State *L)
{
    static const luaL_Reg m[] = {
        {"evaluate", sw_api_scope_evaluate}, {"policies", scope_policies}, {NULL, NULL}};
    identity_methods_mt(L, m, scope_gc, scope_tostring);
}

/* The caller may hand out each policy (security.scope on its id), or the group of a named
 * scope (on the group id). The deciding policies are joined into deciders. false with nil,
 * err pushed. */
static bool may_grant(lua_State *L, const char *const *ids, size_t n, const char *group,
                      char *deciders, size_t size)
{
    deciders[0] = '\0';
    const char *policy;
    if (group) {
        if (!sw_api_may_mint(L, "security.scope", group, &policy)) return false;
        join(deciders, size, policy);
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        if (!sw_api_may_mint(L, "security.scope", ids[i], &policy)) return false;
        join(deciders, size, policy);
    }
    return true;
}

static void joined_ids(const char *const *ids, size_t n, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) join(buf, size, ids[i]);
}

/* What the audit names a scope by: its group, else its policy ids. */
const char *identity_scope_list(const sw_sec_scope *s, char *buf, size_t size)
{
    if (s->group) snprintf(buf, size, "%s", s->group);
    else joined_ids(s->ids, s->n, buf, size);
    return buf;
}

sw_security_set *identity_current_set(lua_State *L)
{
    return sw_runtime_security(sw_proc_of(L)->rt);
}

/* security.new_scope({ids}) */
static int l_new_scope(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t n = lua_objlen(L, 1);
    if (n > SCOPE_MAX) return luaL_argerror(L, 1, "more than 1024 policies");
    const char *ids[SCOPE_MAX];
    lua_createtable(L, (int)n, 0); /* the qualified ids, anchored here */
    int anchor = lua_gettop(L);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 1, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 1, "policy ids must be strings");
        char buf[ID_MAX + 64];
        size_t len;
        const char *id = identity_check_id(L, lua_gettop(L), &len);
        lua_pushstring(L, identity_qualify(L, id, buf, sizeof buf));
        ids[i] = lua_tostring(L, -1);
        lua_rawseti(L, anchor, (int)i + 1);
        lua_pop(L, 1);
    }
    char deciders[512], resource[512];
    if (!may_grant(L, ids, n, NULL, deciders, sizeof deciders)) return 2;
    char err[ID_MAX + 32];
    sw_security_set *set = identity_current_set(L);
    sw_sec_scope *s = sw_sec_scope_new(set, ids, n, err, sizeof err);
    sw_security_release(set);
    if (!s) return sw_api_fail(L, err);
    identity_push_scope(L, s);
    joined_ids(ids, n, resource, sizeof resource);
    sw_api_audit(L, "identity minted", "security.scope", resource, deciders, NULL, NULL);
    return 1;
}

/* security.named_scope(group) */
static int l_named_scope(lua_State *L)
{
    size_t len;
    char buf[ID_MAX + 64];
    const char *group = identity_qualify(L, identity_check_id(L, 1, &len), buf, sizeof buf);
    const char *policy;
    if (!sw_api_may_mint(L, "security.scope", group, &policy)) return 2;
    char err[ID_MAX + 64];
    sw_security_set *set = identity_current_set(L);
    sw_sec_scope *s = sw_sec_scope_group(set, group, err, sizeof err);
    sw_security_release(set);
    if (!s) return sw_api_fail(L, err);
    identity_push_scope(L, s);
    sw_api_audit(L, "identity minted", "security.scope", group, policy, NULL, NULL);
    return 1;
}

/* ---- process.with_context ---- */

static sw_sec_identity *self_identity(lua_State *L)
{
    ctx_ud *u = sw_api_checkudata(L, 1, &ctx_mt_key, "context");
    /* Anchored while self leaves the stack, so the identity outlives the spawn. */
    lua_pushlightuserdata(L, (void *)&anchor_key);
    lua_pushvalue(L, 1);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_remove(L, 1);
    return u->id;
}

static int c_spawn(lua_State *L) { return sw_api_spawn_as(L, 0, self_identity(L)); }
static int c_spawn_monitored(lua_State *L)
{
    return sw_api_spawn_as(L, SW_API_SPAWN_MONITOR, self_identity(L));
}
static int c_spawn_linked(lua_State *L)
{
    return sw_api_spawn_as(L, SW_API_SPAWN_LINK, self_identity(L));
}
static int c_spawn_linked_monitored(lua_State *L)
{
    return sw_api_spawn_as(L, SW_API_SPAWN_LINK | SW_API_SPAWN_MONITOR, self_identity(L));
}
static int c_call(lua_State *L) { return sw_api_funcs_call_as(L, self_identity(L)); }

static int ctx_gc(lua_State *L)
{
    ctx_ud *u = lua_touserdata(L, 1);
    sw_sec_identity_release(u->id);
    u->id = NULL;
    return 0;
}

static void ctx_mt_init(lua_State *L)
{
    static const luaL_Reg m[] = {{"spawn", c_spawn},
                                 {"spawn_monitored", c_spawn_monitored},
                                 {"spawn_linked", c_spawn_linked},
                                 {"spawn_linked_monitored", c_spawn_linked_monitored},
                                 {"call", c_call},
                                 {NULL, NULL}};
    identity_methods_mt(L, m, ctx_gc, NULL);
}

/* process.with_context{actor = a, scope = s}: the caller may impersonate a and hand out
 * every policy of s, checked now (a value received in a message grants nothing by itself). */
int sw_api_with_context(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "actor");
    lua_getfield(L, 1, "scope");
    sw_sec_actor *a = sw_api_to_actor(L, 2);
    sw_sec_scope *s = sw_api_to_scope(L, 3);
    if (!a || !s)
        return luaL_argerror(L, 1,
                             "needs actor (security.new_actor) and scope (security.new_scope)");
    const char *policy;
    if (!sw_api_may_mint(L, "security.impersonate", a->id, &policy)) return 2;
    char deciders[512], names[512];
    if (!may_grant(L, s->ids, s->n, s->group, deciders, sizeof deciders)) return 2;
    ctx_ud *u = lua_newuserdata(L, sizeof *u);
    u->id = NULL;
    sw_api_push_metatable(L, &ctx_mt_key, ctx_mt_init);
    lua_setmetatable(L, -2);
    u->id = sw_sec_identity_new(a, s);
    join(deciders, sizeof deciders, policy);
    sw_api_audit(L, "identity minted", "process.with_context", a->id, deciders, NULL,
                 identity_scope_list(s, names, sizeof names));
    return 1;
}

void sw_api_identity_register(lua_State *L)
{
    static const luaL_Reg fns[] = {{"new_actor", l_new_actor},
                                   {"new_scope", l_new_scope},
                                   {"named_scope", l_named_scope},
                                   {"token_store", identity_token_store},
                                   {NULL, NULL}};
    luaL_register(L, NULL, fns);
}
