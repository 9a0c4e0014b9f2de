/* The HTTP server's process side (docs/registry.md "http.service"). An http.service runs as
 * a supervised service whose process is the host's own (lua/http_server.lua) with `srv`, an
 * object only that chunk sees: start (guarded as net.listen), address, drain, connections. The
 * sockets, parsing and limits are C (runtime/http_server.c) on that process's worker; each
 * complete request is routed here (runtime/http_routes.c), answered 404/405, authenticated
 * when its route has `auth` (runtime/http_auth.c: 401 before any Lua), then handed to a
 * handler process (api_http_handler.c); one that cannot start is answered 503. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_http_handler.h"
#include "http_auth.h"
#include "http_routes.h"
#include "http_server.h"
#include "proc.h"
#include "runtime.h"

typedef struct hserver {
    sw_hsrv *srv; /* NULL until started, and once closed */
    sw_hroutes routes;
    const sw_entry *entry; /* the http.service */
    sw_proc *proc;         /* the service's process, whose state holds this object */
} hserver;

static const char server_mt_key = 0;

/* ---- routing ---- */

static void answer_text(const sw_hsrv_token *tok, int status, const char *head)
{
    char body[64];
    int n = snprintf(body, sizeof body, "%s\n", sw_hsrv_reason(status));
    sw_hsrv_respond(tok, status, head, strlen(head), body, (size_t)n, false);
}

/* A complete request (runtime/http_server.c): routed, then answered 404/405 or handed to
 * its endpoint's handler. Runs on the server's worker, outside any process's slice. */
static void dispatch(void *arg, const sw_hsrv_token *tok, const sw_hsrv_request *req)
{
    hserver *hs = arg;
    const char *q = strchr(req->url, '?');
    size_t path_len = q ? (size_t)(q - req->url) : strlen(req->url);
    const sw_hroute *route;
    char params[1024], allow[128];
    size_t params_len = 0;
    int st = sw_hroutes_match(&hs->routes, req->method, req->url, path_len, &route, params,
                              sizeof params, &params_len, allow, sizeof allow);
    if (st == 404) {
        answer_text(tok, 404, "");
        return;
    }
    if (st == 405) {
        char head[160];
        snprintf(head, sizeof head, "allow: %s\r\n", allow);
        answer_text(tok, 405, head);
        return;
    }
    sw_sec_identity *id;
    sw_hauth auth = sw_http_authenticate(route, req, &id);
    if (auth == SW_HAUTH_MISSING || auth == SW_HAUTH_INVALID) {
        char head[160];
        sw_http_auth_challenge(route, auth, head, sizeof head);
        answer_text(tok, 401, head);
        if (auth == SW_HAUTH_INVALID) sw_http_auth_audit(hs->proc->rt, hs->entry->id, route, req);
        return;
    }
    char err[256];
    int rc = sw_http_handler_start(hs->proc, tok, route, id, params, params_len, err, sizeof err);
    sw_sec_identity_release(id); /* the handler holds its own reference */
    if (rc == 0) return;
    answer_text(tok, 503, ""); /* no process for it: the process limit, host memory */
    sw_log_field f[] = {{.key = "endpoint", .type = SW_LF_STR, .s = route->endpoint->id},
                        {.key = "error", .type = SW_LF_STR, .s = err}};
    sw_log_write(hs->proc->ctx.log, SW_LOG_ERROR, hs->entry->id, "cannot start handler", f, 2);
}

static hserver *check_server(lua_State *L)
{
    return sw_api_checkudata(L, 1, &server_mt_key, "http.server");
}

static void server_close(hserver *hs)
{
    if (hs->srv) {
        sw_hsrv_close(hs->srv);
        sw_hsrv_release(hs->srv);
    }
    hs->srv = NULL;
    sw_hroutes_free(&hs->routes);
}

static int s_gc(lua_State *L)
{
    server_close(lua_touserdata(L, 1));
    return 0;
}

/* The token store of each route with auth (host-wide: they outlive this server). */
static bool bind_stores(hserver *hs)
{
    for (size_t i = 0; i < hs->routes.n; i++) {
        sw_hroute *r = &hs->routes.v[i];
        if (!r->auth) continue;
        sw_token_stores *all = hs->proc->rt->tokens;
        r->store = all ? sw_token_store_of(all, r->auth->token_store.target) : NULL;
        if (!r->store) return false;
    }
    return true;
}

/* srv:start(): listens on the service's `listen` (guarded: net.listen on tcp:HOST:PORT) and
 * serves its routes. true, or nil, err. */
static int s_start(lua_State *L)
{
    hserver *hs = check_server(L);
    const sw_http_service *cfg = &hs->entry->as.http_service;
    if (hs->srv) return luaL_error(L, "the server is started already");
    char uri[300], resource[200], err[300];
    snprintf(uri, sizeof uri, "%s%s", strncmp(cfg->listen, "tcp://", 6) ? "tcp://" : "",
             cfg->listen);
    sw_net_addr a;
    if (sw_net_addr_parse(uri, &a, resource, sizeof resource, err, sizeof err) != 0 || a.is_unix) {
        lua_pushnil(L);
        lua_pushfstring(L, "listen %s: %s", cfg->listen, a.is_unix ? "not a TCP address" : err);
        return 2;
    }
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && !ctx->allowed(L, "net.listen", resource))
        return sw_push_denied(L, "net.listen", resource);
    if (sw_hroutes_build(&hs->routes, ctx->registry, hs->entry) != 0 || !bind_stores(hs))
        return luaL_error(L, "out of memory");
    sw_hsrv_limits lim = {cfg->limits.max_connections, cfg->limits.header_timeout_ns,
                          cfg->limits.idle_timeout_ns, cfg->limits.max_header_size,
                          cfg->limits.max_body_size};
    int rc;
    hs->srv = sw_hsrv_start(hs->proc, &a, &lim, dispatch, hs, &rc);
    if (!hs->srv) {
        sw_hroutes_free(&hs->routes);
        lua_pushnil(L);
        lua_pushfstring(L, "listen %s: %s", cfg->listen, sw_net_strerror(rc));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int s_address(lua_State *L)
{
    hserver *hs = check_server(L);
    char name[160];
    if (!hs->srv || sw_hsrv_address(hs->srv, name, sizeof name) != 0) return 0;
    lua_pushstring(L, name);
    return 1;
}

static int s_drain(lua_State *L)
{
    hserver *hs = check_server(L);
    if (hs->srv) sw_hsrv_drain(hs->srv);
    return 0;
}

static int s_connections(lua_State *L)
{
    hserver *hs = check_server(L);
    lua_pushinteger(L, hs->srv ? (lua_Integer)sw_hsrv_connections(hs->srv) : 0);
    return 1;
}

static void server_mt_init(lua_State *L)
{
    static const luaL_Reg methods[] = {{"start", s_start},
                                       {"address", s_address},
                                       {"drain", s_drain},
                                       {"connections", s_connections},
                                       {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, s_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

/* main_hook of an http.service's process: lua/http_server.lua's factory at the top -> its
 * main, given the server object of the service this process runs. */
int sw_http_server_main(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    const sw_entry *e = sw_registry_get(p->ctx.registry, p->service ? p->service : "");
    if (!e || e->kind != SW_KIND_HTTP_SERVICE) return luaL_error(L, "not an http.service");
    hserver *hs = lua_newuserdata(L, sizeof *hs);
    memset(hs, 0, sizeof *hs);
    hs->entry = e;
    hs->proc = p;
    sw_api_push_metatable(L, &server_mt_key, server_mt_init);
    lua_setmetatable(L, -2);
    lua_call(L, 1, 1);
    return 1;
}
