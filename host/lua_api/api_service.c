/* The `service` module (docs/lua-api.md#service): what a process of a service (its own process,
 * or any process of its tree) may know and ask of its service. Reading (id, config) is local to
 * the process; readiness, the run's restart policy and the backoff reset go to the supervisor
 * through the hook the composition root handed the runtime (sw_runtime.service_request): this
 * wing never includes the supervisor. */
#include <lauxlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "kinds.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"

/* The caller's service id, or NULL when it belongs to none (`run -x`, a process it spawned). */
static const char *service_of(lua_State *L) { return sw_proc_ctx_of(L)->service; }

static int not_a_service(lua_State *L)
{
    lua_pushnil(L);
    lua_pushliteral(L, "not a service");
    return 2;
}

/* The caller's service entry in the snapshot it reads (a run's processes read the snapshot the
 * run started with). */
static const sw_service *entry_of(lua_State *L, const char *id)
{
    const sw_entry *e = sw_registry_get(sw_proc_ctx_of(L)->registry, id);
    return e && e->kind == SW_KIND_SERVICE ? &e->as.service : NULL;
}

/* Hands rq to the supervisor: true, or nil and why. */
static int request(lua_State *L, sw_svc_request *rq)
{
    sw_runtime *rt = sw_proc_of(L)->rt;
    if (!rt->service_request) return not_a_service(L);
    if (rt->service_request(rt->service_request_arg, rq) != 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "out of memory");
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* The host's check of a call that changes how the service is supervised. */
static bool guard(lua_State *L, const char *action, const char *service)
{
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (!ctx->allowed || ctx->allowed(L, action, service)) return true;
    sw_push_denied(L, action, service);
    return false;
}

static int s_id(lua_State *L)
{
    const char *id = service_of(L);
    if (!id) return not_a_service(L);
    lua_pushstring(L, id);
    return 1;
}

static int s_config(lua_State *L)
{
    const char *id = service_of(L);
    const sw_service *svc = id ? entry_of(L, id) : NULL;
    if (!svc) return not_a_service(L);
    sw_push_node(L, svc->config); /* a fresh copy; references in it are plain ids */
    return 1;
}

/* The service's own process tells the supervisor as process.ready does (its first call counts);
 * a process of its tree asks through the hook. */
static int s_ready(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    const char *id = service_of(L);
    if (!id) return not_a_service(L);
    if (!p->svc_counted) {
        if (p->on_ready) {
            p->on_ready(p->cb_arg, p->id);
            p->on_ready = NULL; /* once */
        }
        lua_pushboolean(L, 1);
        return 1;
    }
    sw_svc_request rq = {.kind = SW_SVC_REQ_READY, .service = id};
    return request(L, &rq);
}

/* The watchdog's ping (docs/supervision.md "Watchdog"): a relaxed store of the monotonic clock
 * in the service's count, shared by every process of the service; the supervisor reads it on
 * its own timer, so a ping queues nothing and wakes nobody. The coarse clock (the same clock as
 * uv_hrtime's, at the kernel tick: a few ms behind at most) costs a third of the precise one;
 * a ping read as a few ms older only brings a deadline of seconds that much nearer. */
static int s_alive(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    if (!service_of(L) || !p->svc) return not_a_service(L);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    atomic_store_explicit(&p->svc->alive_ns,
                          (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                          memory_order_relaxed);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- set_restart_policy: a table checked against lifecycle.restart's own field table ---- */

static const sw_field *restart_field(const char *name)
{
    for (size_t i = 0; i < sw_restart_schema->n; i++)
        if (strcmp(sw_restart_schema->fields[i].name, name) == 0)
            return &sw_restart_schema->fields[i];
    return NULL;
}

/* "a, b or c": an enum field's names. */
static const char *enum_names(lua_State *L, const sw_field *f)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int k = 0; f->enums[k]; k++) {
        if (k) luaL_addstring(&b, f->enums[k + 1] ? ", " : " or ");
        luaL_addstring(&b, f->enums[k]);
    }
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

static void check_enum(lua_State *L, const sw_field *f, void *dst)
{
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    for (int k = 0; s && f->enums[k]; k++) {
        if (strcmp(f->enums[k], s) == 0) {
            *(int *)dst = k;
            return;
        }
    }
    luaL_argerror(L, 1, lua_pushfstring(L, "%s: expected %s", f->name, enum_names(L, f)));
}

/* A number within the field's bounds (NaN is not), whole for an INT field. */
static void check_number(lua_State *L, const sw_field *f, void *dst)
{
    lua_Number x = lua_tonumber(L, -1);
    bool ok = lua_type(L, -1) == LUA_TNUMBER && x >= f->min && x <= f->max;
    if (ok && f->type == SW_F_INT) ok = x == (lua_Number)(int64_t)x; /* in range: no overflow */
    if (!ok)
        luaL_argerror(L, 1,
                      lua_pushfstring(L, "%s: expected %s from %f to %f", f->name,
                                      f->type == SW_F_INT ? "a whole number" : "a number", f->min,
                                      f->max));
    if (f->type == SW_F_INT) *(int64_t *)dst = (int64_t)x;
    else *(double *)dst = x;
}

/* The value on top of L into field f of r; raises a bad argument naming the field. */
static void check_field(lua_State *L, const sw_field *f, sw_restart *r)
{
    void *dst = (char *)r + f->offset;
    if (f->type == SW_F_ENUM) {
        check_enum(L, f, dst);
    } else if (f->type == SW_F_DURATION) {
        int64_t ns = sw_api_to_duration(L, -1);
        if (ns < 0)
            luaL_argerror(L, 1,
                          lua_pushfstring(
                              L, "%s: expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)",
                              f->name));
        *(int64_t *)dst = ns;
    } else {
        check_number(L, f, dst);
    }
}

/* The table at index 1 over the registry's policy: fields it leaves out keep their value. */
static void check_policy(lua_State *L, sw_restart *r)
{
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const sw_field *f =
            lua_type(L, -2) == LUA_TSTRING ? restart_field(lua_tostring(L, -2)) : NULL;
        if (!f)
            luaL_argerror(L, 1,
                          lua_pushfstring(L,
                                          "unknown field %s%s%s (policy, initial_delay, max_delay, "
                                          "backoff_factor, jitter or max_attempts)",
                                          lua_type(L, -2) == LUA_TSTRING ? "\"" : "of type ",
                                          lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                                         : luaL_typename(L, -2),
                                          lua_type(L, -2) == LUA_TSTRING ? "\"" : ""));
        check_field(L, f, r);
        lua_pop(L, 1);
    }
}

static int s_set_restart_policy(lua_State *L)
{
    if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
    const char *id = service_of(L);
    const sw_service *svc = id ? entry_of(L, id) : NULL;
    if (!svc) return not_a_service(L);
    sw_svc_request rq = {.kind = SW_SVC_REQ_CLEAR_POLICY, .service = id};
    if (lua_istable(L, 1)) {
        rq.kind = SW_SVC_REQ_SET_POLICY;
        rq.policy = svc->lifecycle.restart;
        check_policy(L, &rq.policy);
    }
    if (!guard(L, "service.set_restart_policy", id)) return 2;
    return request(L, &rq);
}

static int s_reset_backoff(lua_State *L)
{
    const char *id = service_of(L);
    if (!id) return not_a_service(L);
    if (!guard(L, "service.reset_backoff", id)) return 2;
    sw_svc_request rq = {.kind = SW_SVC_REQ_RESET_BACKOFF, .service = id};
    return request(L, &rq);
}

int sw_open_service(lua_State *L)
{
    static const luaL_Reg fns[] = {{"id", s_id},
                                   {"config", s_config},
                                   {"ready", s_ready},
                                   {"alive", s_alive},
                                   {"set_restart_policy", s_set_restart_policy},
                                   {"reset_backoff", s_reset_backoff},
                                   {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
