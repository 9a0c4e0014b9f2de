/* The HTTP server's Lua side (docs/lua-api.md "HTTP server"). An http.service runs as a
 * supervised service whose process is the host's own (lua/http_server.lua) with `srv`, an
 * object only that chunk sees: start (guarded as net.listen), drain, connections. The sockets,
 * parsing and limits are C (runtime/http_server.c) on that process's worker; each complete
 * request is routed (runtime/http_routes.c) and handed to a fresh process of the endpoint's
 * function.lua, spawned as the service's child (its tree, its limits) with the router's
 * identity and pinned to the same worker, whose main is lua/http_handler.lua around the
 * function: it gets the request as a table built here from the server's buffers and answers
 * through a host function holding the request's token. A handler that ends without answering
 * (raised, killed) gets a 500 here, logged with its error. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
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

/* A request handed to a handler: a userdata in the handler's state (so it goes with it,
 * however it ends) holding a reference to the server. */
typedef struct htoken {
    sw_hsrv_token tok;
    bool answered;
    const sw_entry *endpoint;
    sw_log *log;
    char *identity;
    size_t params_len;
    char params[]; /* "name\0value\0" each */
} htoken;

static const char server_mt_key = 0, token_mt_key = 0;

/* ---- the handler's side ---- */

static int token_gc(lua_State *L)
{
    htoken *t = lua_touserdata(L, 1);
    if (t->tok.srv) sw_hsrv_release(t->tok.srv);
    t->tok.srv = NULL;
    free(t->identity);
    t->identity = NULL;
    return 0;
}

static void token_mt_init(lua_State *L)
{
    lua_pushcfunction(L, token_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
}

static bool header_safe(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == 0) return false;
    return true;
}

/* "name: value\r\n" for each pair of the table at idx (values: strings or numbers). */
static void push_head(lua_State *L, int idx)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (lua_istable(L, idx)) {
        for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
            size_t kn, vn;
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &kn) : NULL;
            int vt = lua_type(L, -1);
            if (!k || (vt != LUA_TSTRING && vt != LUA_TNUMBER))
                luaL_error(L, "response headers: names and values must be strings");
            lua_pushvalue(L, -1); /* tolstring on a copy: a number key stays a number */
            const char *v = lua_tolstring(L, -1, &vn);
            if (!kn || !header_safe(k, kn) || !header_safe(v, vn) || memchr(k, ':', kn))
                luaL_error(L, "response header %s: a name or value holds a line break", k);
            lua_pop(L, 1);
            luaL_addlstring(&b, k, kn);
            luaL_addstring(&b, ": ");
            luaL_addlstring(&b, v, vn);
            luaL_addstring(&b, "\r\n");
        }
    }
    luaL_pushresult(&b);
}

/* respond(status, headers, body, json): the handler's answer (lua/http_handler.lua). */
static int h_respond(lua_State *L)
{
    htoken *t = lua_touserdata(L, lua_upvalueindex(1));
    lua_Integer status = luaL_checkinteger(L, 1);
    size_t body_len, head_len;
    const char *body = luaL_optlstring(L, 3, "", &body_len);
    bool json = lua_toboolean(L, 4);
    if (status < 100 || status > 999) luaL_error(L, "response status %d: not 100-999", (int)status);
    push_head(L, 2);
    const char *head = lua_tolstring(L, -1, &head_len);
    bool first = !t->answered;
    t->answered = true;
    if (!first || !t->tok.srv ||
        sw_hsrv_respond(&t->tok, (int)status, head, head_len, body, body_len, json) != 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "closed");
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Pushes s[0..n) with %XX decoded (and '+' as a space, for a query). */
static void push_decoded(lua_State *L, const char *s, size_t n, bool plus)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            luaL_addchar(&b, (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2])));
            i += 2;
        } else luaL_addchar(&b, plus && s[i] == '+' ? ' ' : s[i]);
    }
    luaL_pushresult(&b);
}

/* query: "a=1&b=x+y" -> {a = "1", b = "x y"} (a repeated key: the last). */
static void push_query(lua_State *L, const char *q, size_t n)
{
    lua_newtable(L);
    const char *end = q + n;
    while (q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *stop = amp ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(stop - q));
        if (stop > q) {
            push_decoded(L, q, (size_t)((eq ? eq : stop) - q), true);
            if (eq) push_decoded(L, eq + 1, (size_t)(stop - eq - 1), true);
            else lua_pushliteral(L, "");
            lua_rawset(L, -3);
        }
        q = stop + 1;
    }
}

/* Pushes a table of "name\0value\0" pairs; a repeated name's values joined with ", ". */
static void push_pairs(lua_State *L, const char *p, size_t n_pairs)
{
    lua_createtable(L, 0, (int)n_pairs);
    for (size_t i = 0; i < n_pairs; i++) {
        const char *name = p, *value = p + strlen(p) + 1;
        p = value + strlen(value) + 1;
        lua_getfield(L, -1, name);
        if (lua_isstring(L, -1)) {
            lua_pushliteral(L, ", ");
            lua_pushstring(L, value);
            lua_concat(L, 3);
        } else {
            lua_pop(L, 1);
            lua_pushstring(L, value);
        }
        lua_setfield(L, -2, name);
    }
}

static size_t count_pairs(const char *p, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += p[i] == 0;
    return n / 2;
}

static void push_request(lua_State *L, const sw_hsrv_request *r, const htoken *t)
{
    lua_createtable(L, 0, 8);
    lua_pushstring(L, r->method);
    lua_setfield(L, -2, "method");
    const char *q = strchr(r->url, '?');
    size_t path_len = q ? (size_t)(q - r->url) : strlen(r->url);
    push_decoded(L, r->url, path_len, false);
    lua_setfield(L, -2, "path");
    push_query(L, q ? q + 1 : "", q ? strlen(q + 1) : 0);
    lua_setfield(L, -2, "query");
    push_pairs(L, t->params, count_pairs(t->params, t->params_len));
    lua_setfield(L, -2, "params");
    push_pairs(L, r->header, r->n_headers);
    lua_setfield(L, -2, "headers");
    lua_pushlstring(L, r->body, r->body_len);
    lua_setfield(L, -2, "body");
    lua_pushstring(L, r->remote);
    lua_setfield(L, -2, "remote");
}

/* main_hook of a handler: the endpoint's function at the top -> the main of
 * lua/http_handler.lua around it, with the request and respond. */
static int handler_hook(lua_State *L)
{
    htoken *t = sw_proc_of(L)->main_hook_arg;
    sw_api_load_shipped(L, "http_handler");
    lua_call(L, 0, 1); /* the factory */
    lua_insert(L, 1);  /* factory, fn */
    const sw_hsrv_request *r = t->tok.srv ? sw_hsrv_request_of(&t->tok) : NULL;
    if (r) push_request(L, r, t);
    else lua_pushnil(L); /* answered or gone before the handler ran */
    lua_pushlightuserdata(L, (void *)t);
    lua_rawget(L, LUA_REGISTRYINDEX); /* the token userdata, anchored by spawn_handler */
    lua_pushcclosure(L, h_respond, 1);
    lua_call(L, 3, 1);
    return 1;
}

/* on_exit of a handler (its worker, before its state closes): one that ended without an
 * answer (it raised, was killed, or ran out of memory) gets a 500; the error is logged, with
 * its traceback, never sent. */
static void handler_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    htoken *t = arg;
    if (t->answered || !t->tok.srv || !sw_hsrv_request_of(&t->tok)) return;
    t->answered = true;
    static const char body[] = "internal server error\n";
    sw_hsrv_respond(&t->tok, 500, "", 0, body, sizeof body - 1, false);
    char spid[32];
    sw_pid_format(pid, spid, sizeof spid);
    sw_log_field f[] = {
        {.key = "endpoint", .type = SW_LF_STR, .s = t->endpoint->id},
        {.key = "error", .type = SW_LF_STR, .s = info->error ? info->error : "no response"},
        {.key = "pid", .type = SW_LF_STR, .s = spid},
    };
    sw_log_write(t->log, SW_LOG_ERROR, t->identity, "handler failed", f, 3);
}

/* ---- the server's side ---- */

typedef struct token_job {
    const sw_hsrv_token *tok;
    const sw_hroute *route;
    const char *params;
    size_t params_len;
    sw_log *log;
    htoken *out;
} token_job;

/* lua_cpcall in the handler's state before it is launched: its token, anchored under its own
 * address (handler_hook finds it there). */
static int make_token(lua_State *L)
{
    token_job *j = lua_touserdata(L, 1);
    htoken *t = lua_newuserdata(L, sizeof *t + j->params_len);
    memset(t, 0, sizeof *t);
    sw_api_push_metatable(L, &token_mt_key, token_mt_init);
    lua_setmetatable(L, -2);
    t->identity = strdup(j->route->identity);
    if (!t->identity) return luaL_error(L, "out of memory");
    t->tok = *j->tok;
    sw_hsrv_retain(t->tok.srv);
    t->endpoint = j->route->endpoint;
    t->log = j->log;
    t->params_len = j->params_len;
    memcpy(t->params, j->params, j->params_len);
    lua_pushlightuserdata(L, (void *)t);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    j->out = t;
    return 0;
}

static void answer_text(const sw_hsrv_token *tok, int status, const char *head)
{
    char body[64];
    int n = snprintf(body, sizeof body, "%s\n", sw_hsrv_reason(status));
    sw_hsrv_respond(tok, status, head, strlen(head), body, (size_t)n, false);
}

/* Starts the route's handler for the request tok names; a request that cannot get one is
 * answered 503 and the reason logged. */
static void spawn_handler(hserver *hs, const sw_hsrv_token *tok, const sw_hroute *route,
                          const char *params, size_t params_len)
{
    sw_proc *p = hs->proc;
    sw_spawn sp = {.entry = route->func,
                   .registry = p->ctx.registry,
                   .service = route->identity,
                   .parent = p,
                   .worker = p->worker,
                   .on_exit = handler_exit,
                   .main_hook = handler_hook};
    char err[256] = "out of memory";
    sw_proc *h = sw_proc_prepare(p->rt, &sp, err, sizeof err);
    token_job j = {tok, route, params, params_len, p->ctx.log, NULL};
    if (h && lua_cpcall(sw_vm_lua(h->vm), make_token, &j) != 0) {
        sw_proc_discard_prepared(h);
        h = NULL;
    }
    if (!h) {
        answer_text(tok, 503, "");
        sw_log_field f[] = {{.key = "endpoint", .type = SW_LF_STR, .s = route->endpoint->id},
                            {.key = "error", .type = SW_LF_STR, .s = err}};
        sw_log_write(p->ctx.log, SW_LOG_ERROR, hs->entry->id, "cannot start handler", f, 2);
        return;
    }
    h->main_hook_arg = j.out;
    h->cb_arg = j.out;
    atomic_fetch_add(&h->pins, 1); /* it answers on this worker's sockets: never stolen */
    sw_proc_launch(h, &sp);
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
    spawn_handler(hs, tok, route, params, params_len);
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
    if (sw_hroutes_build(&hs->routes, ctx->registry, hs->entry) != 0)
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
