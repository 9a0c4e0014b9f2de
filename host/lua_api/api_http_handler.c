/* The handler side of the HTTP server (docs/lua-api.md "HTTP server"): each request gets a
 * fresh process of its endpoint's function.lua, spawned as a child of the http.service's
 * process (its tree, its limits) with the router's identity, pinned to the server's worker. Its
 * main is lua/http_handler.lua around the function: it gets the request as a table built here
 * from the server's buffers and answers through `respond`, a host function bound to the
 * request's token (a userdata of the handler's state, so it goes with the process however it
 * ends). A handler that ends without answering (raised, killed) gets a 500 here, logged with
 * its error and traceback, never sent. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "api_http_handler.h"
#include "proc.h"
#include "runtime.h"

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

static const char token_mt_key = 0;

/* ---- the request and the answer ---- */

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

/* Header names the server writes itself: a handler's are left out (a second content-length
 * would make the response ambiguous). */
static bool server_header(const char *k, size_t kn)
{
    static const char *const names[] = {"content-length", "connection", "transfer-encoding"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (kn == strlen(names[i]) && strncasecmp(k, names[i], kn) == 0) return true;
    return false;
}

/* "name: value\r\n" for each pair of the table at idx (values: strings or numbers). The lines
 * are gathered in a table first: lua_next needs its key at the top, which a luaL_Buffer
 * growing on the stack would move. */
static void push_head(lua_State *L, int idx)
{
    lua_newtable(L);
    int lines = lua_gettop(L), n = 0;
    if (lua_istable(L, idx)) {
        for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
            size_t kn = 0, vn = 0;
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &kn) : NULL;
            int vt = lua_type(L, -1);
            if (!k || (vt != LUA_TSTRING && vt != LUA_TNUMBER))
                luaL_error(L, "response headers: names and values must be strings");
            lua_pushvalue(L, -1); /* tolstring on a copy: a number value stays a number */
            const char *v = lua_tolstring(L, -1, &vn);
            if (!kn || !header_safe(k, kn) || !header_safe(v, vn) || memchr(k, ':', kn))
                luaL_error(L, "response header %s: a name or value holds a line break", k);
            if (!server_header(k, kn)) {
                lua_pushfstring(L, "%s: %s\r\n", k, v);
                lua_rawseti(L, lines, ++n);
            }
            lua_pop(L, 1);
        }
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, lines, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_remove(L, lines);
}

/* Logs a request's failure (its error, the endpoint, the handler's pid) and answers it 500;
 * the error is never sent. */
static void fail_request(htoken *t, uint64_t pid, const char *error)
{
    t->answered = true;
    static const char body[] = "internal server error\n";
    sw_hsrv_respond(&t->tok, 500, "", 0, body, sizeof body - 1, false);
    char spid[32];
    sw_pid_format(pid, spid, sizeof spid);
    sw_log_field f[] = {
        {.key = "endpoint", .type = SW_LF_STR, .s = t->endpoint->id},
        {.key = "error", .type = SW_LF_STR, .s = error},
        {.key = "pid", .type = SW_LF_STR, .s = spid},
    };
    sw_log_write(t->log, SW_LOG_ERROR, t->identity, "handler failed", f, 3);
}

/* Pushes tostring(v) of the value at idx, as the base library makes it, and returns it. Done
 * here, not in Lua: a handler that never reads a builtin never opens them (docs/lua-api.md
 * "Sandbox"), and a hello-world handler reads none. */
static const char *push_text(lua_State *L, int idx)
{
    if (luaL_callmeta(L, idx, "__tostring")) {
        if (lua_isstring(L, -1)) return lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TSTRING: lua_pushvalue(L, idx); return lua_tostring(L, -1);
    case LUA_TNIL: lua_pushliteral(L, "nil"); break;
    case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false"); break;
    default: lua_pushfstring(L, "%s: %p", luaL_typename(L, idx), lua_topointer(L, idx));
    }
    return lua_tostring(L, -1);
}

/* {status, headers, body} as the handler returned it. */
typedef struct answer {
    lua_Integer status;
    const char *body;
    size_t body_len;
    bool json;
} answer;

/* body (a table) as JSON with the process's json module: 0, or -1 with why pushed. */
static int encode_body(lua_State *L, int body, answer *a)
{
    lua_getglobal(L, "json");
    lua_getfield(L, -1, "encode");
    lua_pushvalue(L, body);
    lua_call(L, 1, 2);
    if (lua_isnil(L, -2)) {
        lua_pushfstring(L, "body: %s", push_text(L, -1));
        return -1;
    }
    a->body = lua_tolstring(L, -2, &a->body_len);
    a->json = true;
    return 0;
}

/* The handler's return values (res, err at 1 and 2) -> a, its headers left at 4; NULL, or why
 * it is no answer (docs/lua-api.md "HTTP server": the response table). */
static const char *read_answer(lua_State *L, answer *a)
{
    lua_settop(L, 2);
    if (lua_isnil(L, 1)) return push_text(L, 2);
    if (!lua_istable(L, 1))
        return lua_pushfstring(L, "the handler returned a %s, expected {status, headers, body}",
                               luaL_typename(L, 1));
    lua_getfield(L, 1, "status");  /* 3 */
    lua_getfield(L, 1, "headers"); /* 4 */
    lua_getfield(L, 1, "body");    /* 5 */
    a->status = 200;
    if (lua_toboolean(L, 3)) {
        if (lua_type(L, 3) != LUA_TNUMBER)
            return lua_pushfstring(L, "status: expected a number, got %s", luaL_typename(L, 3));
        a->status = lua_tointeger(L, 3);
    }
    a->body = "";
    a->body_len = 0;
    a->json = false;
    if (lua_istable(L, 5)) return encode_body(L, 5, a) == 0 ? NULL : lua_tostring(L, -1);
    if (!lua_isnil(L, 5))
        a->body = lua_type(L, 5) == LUA_TSTRING
                      ? lua_tolstring(L, 5, &a->body_len)
                      : (push_text(L, 5), lua_tolstring(L, -1, &a->body_len));
    return NULL;
}

/* respond(res, err): the handler's return values, answered (lua/http_handler.lua). A value
 * that is no answer is logged and answered 500; a bad status or header raises (the process
 * fails, and handler_exit answers 500 with the traceback). */
static int h_respond(lua_State *L)
{
    htoken *t = lua_touserdata(L, lua_upvalueindex(1));
    answer a;
    const char *why = read_answer(L, &a);
    if (why) {
        if (!t->answered && t->tok.srv) fail_request(t, sw_proc_of(L)->id, why);
        return 0;
    }
    if (a.status < 100 || a.status > 999)
        luaL_error(L, "response status %d: not 100-999", (int)a.status);
    push_head(L, 4);
    size_t head_len;
    const char *head = lua_tolstring(L, -1, &head_len);
    bool first = !t->answered;
    t->answered = true;
    if (first && t->tok.srv)
        sw_hsrv_respond(&t->tok, (int)a.status, head, head_len, a.body, a.body_len, a.json);
    return 0;
}

/* Pushes s[0..n) with %XX decoded (and '+' as a space, for a query). */
static void push_decoded(lua_State *L, const char *s, size_t n, bool plus)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i++) {
        int c = sw_http_escape_at(s, i, n);
        luaL_addchar(&b, c >= 0 ? (char)c : plus && s[i] == '+' ? ' ' : s[i]);
        if (c >= 0) i += 2;
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

/* req:json(): the body decoded by the process's json module (nil, err when it is no JSON). */
static int req_json(lua_State *L)
{
    lua_getglobal(L, "json");
    lua_getfield(L, -1, "decode");
    lua_getfield(L, 1, "body");
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L) - 2;
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
    lua_createtable(L, 0, 1); /* its metatable: {__index = {json = req_json}} */
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, req_json);
    lua_setfield(L, -2, "json");
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
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
    fail_request(t, pid, info->error ? info->error : "no response");
}

/* ---- starting one ---- */

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

/* Starts a handler for the request tok names: a fresh process of the route's function.lua
 * (running as id, a request's token, when given), prepared with its token, pinned to the
 * server's worker and launched. 0, or -1 with err. */
int sw_http_handler_start(sw_proc *server, const sw_hsrv_token *tok, const sw_hroute *route,
                          sw_sec_identity *id, const char *params, size_t params_len, char *err,
                          size_t errlen)
{
    sw_spawn sp = {.entry = route->func,
                   .registry = server->ctx.registry,
                   .service = route->identity,
                   .parent = server,
                   .worker = server->worker,
                   .on_exit = handler_exit,
                   .main_hook = handler_hook,
                   .identity = id};
    snprintf(err, errlen, "out of memory");
    sw_proc *h = sw_proc_prepare(server->rt, &sp, err, errlen);
    if (!h) return -1;
    token_job j = {tok, route, params, params_len, server->ctx.log, NULL};
    if (lua_cpcall(sw_vm_lua(h->vm), make_token, &j) != 0) {
        snprintf(err, errlen, "out of memory");
        sw_proc_discard_prepared(h);
        return -1;
    }
    h->main_hook_arg = j.out;
    h->cb_arg = j.out;
    atomic_fetch_add(&h->pins, 1); /* it answers on this worker's sockets: never stolen */
    sw_proc_launch(h, &sp);
    return 0;
}
