/* Lua `security` (docs/security.md) and the host's guard for its own calls, both on the policy engine
 * (security.h) with the runtime's current policy set:
 *   security.can(action, resource, meta?)   -> boolean (undefined counts as false)
 *   security.check(action, resource, meta?) -> "allow" | "deny" | "undefined"
 *   security.actor()                        -> nil | object with :id() and :meta() (a copy)
 *   security.can(action, resource, meta, {actor =, scope =}) -> as another identity would
 * and the identity functions of api_identity.c (new_actor, new_scope, named_scope) and
 * api_token_store.c (token_store).
 * action and resource must be strings (no coercion, no embedded NUL), meta nil or a table;
 * anything else raises "bad argument". meta is read in place, never copied.
 *
 * A process's context is that of its identity when it runs as one (process.with_context, and
 * what such a process spawns), else that of its service (children inherit both). Each process
 * caches (set, context) in one userdata: a check compares the runtime's current set pointer
 * with the cached one (no lock, no lookup when unchanged) and re-resolves only after a publish;
 * the cache holds a reference to its set, dropped when the process's state closes. One check
 * reads exactly one set. */
#include <lauxlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "api_identity.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"

typedef struct sec_cache {
    sw_runtime *rt;
    const char *service;       /* owned by the process, which outlives its state */
    sw_sec_identity *identity; /* the process's (it outlives its state), or NULL */
    sw_security_set *set;      /* a reference, or NULL before the first check */
    const sw_sec_ctx *ctx;     /* the service's context in set, or &own, or NULL */
    sw_sec_scope *bound;       /* identity's scope with set's policies (a reference) */
    sw_sec_ctx own;            /* identity's context */
} sec_cache;

static const char cache_key = 0, cache_mt_key = 0,
                  actor_mt_key = 0; /* addresses as registry keys */

static int cache_gc(lua_State *L)
{
    sec_cache *c = lua_touserdata(L, 1);
    sw_security_release(c->set);
    sw_sec_scope_release(c->bound);
    c->set = NULL;
    c->bound = NULL;
    return 0;
}

static void cache_mt_init(lua_State *L)
{
    lua_pushcfunction(L, cache_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

/* Pushes the process's cache userdata, creating it on first use. */
static sec_cache *push_cache(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&cache_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return lua_touserdata(L, -1);
    lua_pop(L, 1);
    sec_cache *c = lua_newuserdata(L, sizeof *c);
    sw_proc *p = sw_proc_of(L);
    *c = (sec_cache){.rt = p->rt, .service = p->service, .identity = p->identity};
    sw_api_push_metatable(L, &cache_mt_key, cache_mt_init);
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, (void *)&cache_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return c;
}

/* The context to check with, from the runtime's current set. */
static const sw_sec_ctx *current_ctx(sec_cache *c)
{
    if (atomic_load_explicit(&c->rt->security, memory_order_acquire) == c->set) return c->ctx;
    sw_security_set *now = sw_runtime_security(c->rt);
    sw_security_release(c->set);
    c->set = now;
    if (!c->identity) {
        c->ctx = sw_security_ctx_of(now, c->service);
        return c->ctx;
    }
    /* A reload re-resolves the identity's policies by id (docs/security.md "Identities at run
     * time"): one a reload removed leaves the scope broken, granting nothing. */
    sw_sec_scope_release(c->bound);
    c->bound = sw_sec_scope_bind(c->identity->scope, now);
    c->own = sw_sec_ctx_of_identity(c->identity->actor, c->bound);
    c->ctx = &c->own;
    return c->ctx;
}

const sw_sec_ctx *sw_api_caller_ctx(lua_State *L)
{
    sec_cache *c = push_cache(L);
    lua_pop(L, 1);
    return current_ctx(c);
}

/* ---- meta: a Lua table read in place ---- */

static void lua_field(const sw_sec_value *c, const char *key, sw_sec_value *out);
static bool lua_item(const sw_sec_value *c, size_t i, sw_sec_value *out);
static const sw_sec_source lua_source = {lua_field, lua_item};

/* The value on top of L. Tables stay on the stack (their slot is the handle; the caller resets
 * the top after the check); scalars are popped: their strings stay alive in the table. */
static void lua_value(lua_State *L, sw_sec_value *out)
{
    memset(out, 0, sizeof *out);
    int t = lua_type(L, -1);
    switch (t) {
    case LUA_TTABLE:
        *out = (sw_sec_value){
            .type = SW_SV_CONTAINER, .src = &lua_source, .ref = L, .idx = lua_gettop(L)};
        return;
    case LUA_TSTRING: out->type = SW_SV_STRING, out->s = lua_tolstring(L, -1, &out->len); break;
    case LUA_TNUMBER: out->type = SW_SV_NUMBER, out->num = lua_tonumber(L, -1); break;
    case LUA_TBOOLEAN: out->type = SW_SV_BOOL, out->b = lua_toboolean(L, -1); break;
    case LUA_TNIL: out->type = SW_SV_MISSING; break;
    default: out->type = SW_SV_OTHER;
    }
    lua_pop(L, 1);
}

static void lua_field(const sw_sec_value *c, const char *key, sw_sec_value *out)
{
    lua_State *L = (lua_State *)c->ref;
    memset(out, 0, sizeof *out);
    if (!lua_checkstack(L, 2)) return; /* missing: never an allow it should not be */
    lua_pushstring(L, key);
    lua_rawget(L, (int)c->idx);
    lua_value(L, out);
}

static bool lua_item(const sw_sec_value *c, size_t i, sw_sec_value *out)
{
    lua_State *L = (lua_State *)c->ref;
    if (i >= (size_t)lua_objlen(L, (int)c->idx) || !lua_checkstack(L, 2)) return false;
    lua_rawgeti(L, (int)c->idx, (int)i + 1);
    lua_value(L, out);
    return true;
}

/* ---- can / check ---- */

static const char *check_name(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    const char *s = lua_tolstring(L, idx, len);
    if (memchr(s, 0, *len)) luaL_argerror(L, idx, "must not contain a NUL byte");
    return s;
}

/* The context `as` (a {actor =, scope =} table at idx 4) asks for: the actor given, else the
 * caller's; the scope given, else the caller's policies. Built in *out; NULL for no `as`. A
 * broken scope (*broken) decides deny. */
static const sw_sec_ctx *as_ctx(lua_State *L, const sw_sec_ctx *mine, sw_sec_ctx *out, bool *broken)
{
    int t = lua_type(L, 4);
    if (t == LUA_TNONE || t == LUA_TNIL) return mine;
    if (t != LUA_TTABLE) luaL_typerror(L, 4, "table or nil");
    lua_getfield(L, 4, "actor");
    lua_getfield(L, 4, "scope");
    sw_sec_actor *a = sw_api_to_actor(L, -2);
    sw_sec_scope *s = sw_api_to_scope(L, -1);
    if ((!a && !lua_isnil(L, -2)) || (!s && !lua_isnil(L, -1)))
        luaL_argerror(L, 4,
                      "actor must be an actor and scope a scope (security.new_actor, new_scope)");
    lua_pop(L, 2); /* both stay referenced by the table at 4 */
    *out = mine ? *mine : (sw_sec_ctx){0};
    if (a) {
        out->actor_id = a->id;
        out->actor_meta = a->meta;
    }
    if (s) {
        out->n = s->n;
        out->policies = s->pols;
    }
    *broken = s && s->broken;
    return out;
}

static sw_sec_decision decide(lua_State *L)
{
    sec_cache *c = lua_touserdata(L, lua_upvalueindex(1));
    size_t alen, rlen;
    const char *action = check_name(L, 1, &alen), *resource = check_name(L, 2, &rlen);
    int t = lua_type(L, 3);
    if (t != LUA_TNONE && t != LUA_TNIL && t != LUA_TTABLE) luaL_typerror(L, 3, "table or nil");
    sw_sec_ctx as;
    bool broken = false;
    const sw_sec_ctx *ctx = as_ctx(L, current_ctx(c), &as, &broken);
    if (broken) return SW_SEC_DENY;
    sw_sec_value meta = {.type = SW_SV_CONTAINER, .src = &lua_source, .ref = L, .idx = 3};
    int top = lua_gettop(L);
    sw_sec_decision d = sw_security_check_len(ctx, !c->rt->security_relaxed, action, alen, resource,
                                              rlen, t == LUA_TTABLE ? &meta : NULL);
    lua_settop(L, top);
    return d;
}

int sw_api_scope_evaluate(lua_State *L)
{
    sw_sec_scope *s = sw_api_to_scope(L, 1);
    sw_sec_actor *a = sw_api_to_actor(L, 2);
    if (!s) luaL_typerror(L, 1, "scope");
    if (!a) luaL_typerror(L, 2, "actor");
    size_t alen, rlen;
    const char *action = check_name(L, 3, &alen), *resource = check_name(L, 4, &rlen);
    int t = lua_type(L, 5);
    if (t != LUA_TNONE && t != LUA_TNIL && t != LUA_TTABLE) luaL_typerror(L, 5, "table or nil");
    sw_sec_value meta = {.type = SW_SV_CONTAINER, .src = &lua_source, .ref = L, .idx = 5};
    int top = lua_gettop(L);
    sw_sec_decision d = sw_sec_scope_decide(s, a, action, alen, resource, rlen,
                                            t == LUA_TTABLE ? &meta : NULL, NULL);
    lua_settop(L, top);
    lua_pushstring(L, sw_sec_decision_names[d]);
    return 1;
}

static int l_can(lua_State *L)
{
    lua_pushboolean(L, decide(L) == SW_SEC_ALLOW);
    return 1;
}

static int l_check(lua_State *L)
{
    lua_pushstring(L, sw_sec_decision_names[decide(L)]);
    return 1;
}

/* ---- actor ---- */

static const sw_sec_ctx *actor_of(lua_State *L)
{
    const sw_sec_ctx *ctx = current_ctx(lua_touserdata(L, lua_upvalueindex(1)));
    return ctx && ctx->actor_id ? ctx : NULL;
}

static int actor_id(lua_State *L)
{
    const sw_sec_ctx *ctx = actor_of(L);
    if (ctx) lua_pushstring(L, ctx->actor_id);
    else lua_pushnil(L);
    return 1;
}

/* A fresh copy every call: changing it changes nothing the host reads. */
static int actor_meta(lua_State *L)
{
    const sw_sec_ctx *ctx = actor_of(L);
    if (ctx && ctx->actor_meta) sw_push_node(L, ctx->actor_meta);
    else if (ctx) lua_newtable(L);
    else lua_pushnil(L);
    return 1;
}

static void actor_mt_init(lua_State *L)
{
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, actor_id, 1);
    lua_setfield(L, -2, "id");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, actor_meta, 1);
    lua_setfield(L, -2, "meta");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, sw_api_readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

static int l_actor(lua_State *L)
{
    if (!actor_of(L)) {
        lua_pushnil(L);
        return 1;
    }
    lua_newtable(L);
    sw_api_push_metatable(L, &actor_mt_key, actor_mt_init); /* init reads upvalue 1: the cache */
    lua_setmetatable(L, -2);
    return 1;
}

/* ---- the host's guard ---- */

/* The caller's decision on action and resource, with the deciding policy's id. */
static sw_sec_decision caller_decides(sec_cache *c, const sw_sec_ctx *ctx, const char *action,
                                      const char *resource, const char **policy)
{
    const sw_entry *decider = NULL;
    sw_sec_decision d = sw_security_decide(ctx, !c->rt->security_relaxed, action, strlen(action),
                                           resource, strlen(resource), NULL, &decider);
    *policy = decider ? decider->id : NULL;
    return d;
}

static bool guard(lua_State *L, const char *action, const char *resource, bool audit)
{
    const sw_proc *p = sw_proc_of(L);
    if (!p->service && !p->identity) return true; /* no context at all: nothing is guarded */
    sec_cache *c = push_cache(L);
    const sw_sec_ctx *ctx = current_ctx(c);
    lua_pop(L, 1);
    if (!ctx) return true; /* no lifecycle.security: the host guards nothing */
    const char *policy;
    if (caller_decides(c, ctx, action, resource, &policy) == SW_SEC_ALLOW) return true;
    if (audit) sw_api_audit(L, "security denied", action, resource, policy, NULL, NULL);
    return false;
}

bool sw_security_allowed(lua_State *L, const char *action, const char *resource)
{
    return guard(L, action, resource, true);
}

bool sw_security_visible(lua_State *L, const char *action, const char *resource)
{
    return guard(L, action, resource, false);
}

bool sw_api_may_mint(lua_State *L, const char *action, const char *resource, const char **policy)
{
    sec_cache *c = push_cache(L);
    const sw_sec_ctx *ctx = current_ctx(c);
    lua_pop(L, 1);
    const char *decider;
    if (!policy) policy = &decider;
    if (caller_decides(c, ctx, action, resource, policy) == SW_SEC_ALLOW) return true;
    sw_api_audit(L, "security denied", action, resource, *policy, NULL, NULL);
    sw_push_denied(L, action, resource);
    return false;
}

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void sw_api_audit(lua_State *L, const char *msg, const char *action, const char *resource,
                  const char *policy, const char *subject, const char *scope)
{
    sw_proc *p = sw_proc_of(L);
    if (!sw_log_enabled(p->rt->log, SW_LOG_INFO)) return;
    const sw_sec_ctx *ctx = sw_api_caller_ctx(L);
    const char *actor = ctx && ctx->actor_id ? ctx->actor_id : NULL;
    uint64_t suppressed = 0;
    if (p->rt->audit &&
        !sw_audit_admit(p->rt->audit, monotonic_ns(), msg, actor, action, resource, &suppressed))
        return;
    sw_log_field f[8];
    size_t n = 0;
    f[n++] = (sw_log_field){.key = "pid", .type = SW_LF_STR, .s = p->pid};
    if (actor) f[n++] = (sw_log_field){.key = "actor", .type = SW_LF_STR, .s = actor};
    f[n++] = (sw_log_field){.key = "action", .type = SW_LF_STR, .s = action};
    f[n++] = (sw_log_field){.key = "resource", .type = SW_LF_STR, .s = resource};
    if (policy) f[n++] = (sw_log_field){.key = "policy", .type = SW_LF_STR, .s = policy};
    if (subject) f[n++] = (sw_log_field){.key = "subject", .type = SW_LF_STR, .s = subject};
    if (scope) f[n++] = (sw_log_field){.key = "scope", .type = SW_LF_STR, .s = scope};
    if (suppressed)
        f[n++] = (sw_log_field){.key = "suppressed", .type = SW_LF_INT, .i = (int64_t)suppressed};
    sw_log_write(p->rt->log, SW_LOG_INFO, p->service, msg, f, n);
}

int sw_open_security(lua_State *L)
{
    lua_createtable(L, 0, 3);
    static const struct {
        const char *name;
        lua_CFunction fn;
    } fns[] = {{"can", l_can}, {"check", l_check}, {"actor", l_actor}};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        push_cache(L);
        lua_pushcclosure(L, fns[i].fn, 1);
        lua_setfield(L, -2, fns[i].name);
    }
    sw_api_identity_register(L);
    return 1;
}
