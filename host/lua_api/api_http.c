/* The `http` module: an HTTP client (docs/lua-api.md "HTTP client"). http.request{...},
 * http.get(url, opts) and http.post(url, body, opts), each guarded as http.request on the URL
 * as given and blocking only its task, in the five steps (check; arm: start the transfer;
 * register the cleanup: its cancel removes the transfer; yield; resume with the response) on
 * the runtime's transfers (runtime/http_client.h). */
#include <ctype.h>
#include <lauxlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "http_client.h"
#include "proc.h"
#include "task.h"
#include "units.h"

/* ---- the response ---- */

/* "Name: value" lines into t[name lower-cased] = value (trimmed); a repeated name's values
 * are joined with ", ". */
static void push_headers(lua_State *L, const char *h, size_t len)
{
    lua_newtable(L);
    const char *end = h + len;
    while (h < end) {
        const char *eol = memchr(h, '\n', (size_t)(end - h));
        const char *next = eol ? eol + 1 : end;
        if (!eol) eol = end;
        if (eol > h && eol[-1] == '\r') eol--;
        const char *colon = memchr(h, ':', (size_t)(eol - h));
        if (colon && colon > h) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *c = h; c < colon; c++)
                luaL_addchar(&b, (char)tolower((unsigned char)*c));
            luaL_pushresult(&b);
            const char *v = colon + 1, *ve = eol;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            lua_pushvalue(L, -1);
            lua_rawget(L, -3);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                lua_pushlstring(L, v, (size_t)(ve - v));
            } else {
                lua_pushliteral(L, ", ");
                lua_pushlstring(L, v, (size_t)(ve - v));
                lua_concat(L, 3);
            }
            lua_rawset(L, -3);
        }
        h = next;
    }
}

/* The transfer finished: {status, headers, body} or nil, err. */
static int finish(sw_http_xfer *x, lua_State *L)
{
    const char *err = sw_http_error(x);
    if (err) return sw_api_fail(L, err);
    size_t len;
    lua_createtable(L, 0, 3);
    lua_pushnumber(L, (lua_Number)sw_http_status(x));
    lua_setfield(L, -2, "status");
    const char *h = sw_http_headers(x, &len);
    push_headers(L, h, len);
    lua_setfield(L, -2, "headers");
    const char *body = sw_http_body(x, &len);
    lua_pushlstring(L, body, len);
    lua_setfield(L, -2, "body");
    return 1;
}

/* ---- the request ---- */

static bool is_token(const char *s, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i])) return false;
    return true;
}

/* Pushes opts[name] (nil without opts) and returns its index: it stays on the stack, so a
 * string read from it lives until the request has started. */
static int field(lua_State *L, int opts, const char *name)
{
    if (opts) lua_getfield(L, opts, name);
    else lua_pushnil(L);
    return lua_gettop(L);
}

static int64_t check_timeout(lua_State *L, int idx)
{
    int64_t ns = sw_api_to_duration(L, idx);
    if (ns < 0)
        luaL_error(L,
                   "http: timeout: expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)");
    int64_t ms = (ns + 999999) / 1000000;
    return ms > 0 ? ms : 1; /* curl reads 0 as "never" */
}

/* The "Name: value" lines of the headers table at idx: an array of pointers to strings kept
 * in a table left on the stack. */
static const char **header_lines(lua_State *L, int idx, size_t *n)
{
    *n = 0;
    if (lua_isnil(L, idx)) return NULL;
    if (!lua_istable(L, idx)) luaL_error(L, "http: headers: expected a table of name = value");
    size_t count = 0;
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) count++;
    const char **lines = lua_newuserdata(L, (count ? count : 1) * sizeof *lines);
    lua_createtable(L, (int)count, 0); /* keeps the lines */
    int keep = lua_gettop(L);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        size_t nl, vl;
        if (lua_type(L, -2) != LUA_TSTRING || !is_token(lua_tostring(L, -2), lua_objlen(L, -2)))
            luaL_error(L, "http: headers: a name must be a string of token characters");
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "http: headers: the value of %s must be a string", lua_tostring(L, -2));
        const char *name = lua_tolstring(L, -2, &nl);
        lua_pushvalue(L, -1); /* tolstring on a copy: a number key is never converted in place */
        const char *value = lua_tolstring(L, -1, &vl);
        if (strlen(value) != vl || strpbrk(value, "\r\n"))
            luaL_error(L, "http: headers: the value of %s may not hold CR, LF or NUL", name);
        if (vl) lua_pushfstring(L, "%s: %s", name, value);
        else lua_pushfstring(L, "%s;", name); /* curl's way to send an empty value */
        lines[*n] = lua_tostring(L, -1);
        lua_rawseti(L, keep, (int)++*n);
        lua_pop(L, 1);
    }
    return lines;
}

static bool scheme_ok(const char *url)
{
    return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

/* The five steps for a request: url (a string at url_idx), method, the body at body_idx (0:
 * opts.body), and the options table at opts (0: none). */
static int request(lua_State *L, int url_idx, const char *method, int body_idx, int opts)
{
    if (opts && lua_isnil(L, opts)) opts = 0;
    if (opts) luaL_checktype(L, opts, LUA_TTABLE);
    sw_http_request r = {
        .method = method, .timeout_ms = SW_HTTP_TIMEOUT_MS, .max_body = SW_HTTP_MAX_BODY};
    if (!url_idx) url_idx = field(L, opts, "url");
    if (lua_type(L, url_idx) != LUA_TSTRING) luaL_error(L, "http: url: expected a string");
    r.url = lua_tostring(L, url_idx);
    if (!method) {
        int m = field(L, opts, "method");
        bool ok = lua_isnil(L, m) ||
                  (lua_type(L, m) == LUA_TSTRING && is_token(lua_tostring(L, m), lua_objlen(L, m)));
        if (!ok) luaL_error(L, "http: method: expected a method name such as \"GET\"");
        r.method = lua_isnil(L, m) ? "GET" : lua_tostring(L, m);
    }
    if (!body_idx) body_idx = field(L, opts, "body");
    if (!lua_isnil(L, body_idx) && lua_type(L, body_idx) != LUA_TSTRING)
        luaL_error(L, "http: body: expected a string");
    if (lua_type(L, body_idx) == LUA_TSTRING) r.body = lua_tolstring(L, body_idx, &r.body_len);
    int t = field(L, opts, "timeout");
    if (!lua_isnil(L, t)) r.timeout_ms = check_timeout(L, t);
    int mb = field(L, opts, "max_body");
    if (!lua_isnil(L, mb)) {
        lua_Number n = lua_tonumber(L, mb);
        if (lua_type(L, mb) != LUA_TNUMBER || !(n >= 1 && n <= 4294967295.0))
            luaL_error(L, "http: max_body: expected a byte count of at least 1");
        r.max_body = (size_t)n;
    }
    int fr = field(L, opts, "follow_redirects");
    if (!lua_isnil(L, fr) && !lua_isboolean(L, fr))
        luaL_error(L, "http: follow_redirects: expected a boolean");
    r.follow_redirects = lua_toboolean(L, fr);
    r.headers = header_lines(L, field(L, opts, "headers"), &r.n_headers);

    /* check: a task that can wait, a URL this client speaks, the guard */
    sw_task *task = sw_task_current(L);
    if (!task || !lua_isyieldable(L))
        return sw_task_block(L, NULL); /* raises as blocking calls do */
    if (!scheme_ok(r.url)) {
        lua_pushfstring(L, "bad url \"%s\": expected http:// or https://", r.url);
        return sw_api_fail(L, lua_tostring(L, -1));
    }
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && !ctx->allowed(L, "http.request", r.url))
        return sw_push_denied(L, "http.request", r.url);
    /* arm, register the cleanup, yield; finish pushes the results at the delivery */
    char err[160];
    sw_http_xfer *x = sw_http_start(sw_proc_of(L), &r, err, sizeof err);
    if (!x) return sw_api_fail(L, err);
    return sw_task_block(L, sw_http_wait(x, task, finish));
}

static int h_request(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    return request(L, 0, NULL, 0, 1);
}

static int h_get(lua_State *L)
{
    luaL_checkstring(L, 1);
    lua_settop(L, 2);
    lua_pushnil(L); /* 3: no body */
    return request(L, 1, "GET", 3, 2);
}

static int h_post(lua_State *L)
{
    luaL_checkstring(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checkstring(L, 2);
    lua_settop(L, 3);
    return request(L, 1, "POST", 2, 3);
}

int sw_open_http(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"request", h_request}, {"get", h_get}, {"post", h_post}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
