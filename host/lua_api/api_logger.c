/* Lua `logger` (docs/lua-api.md; its lines as docs/operating.md describes the log):
 * logger.debug/info/warn/error(msg, fields?), also callable as logger:info(msg, fields). Builds sw_log fields from the fields table without
 * running any Lua code (raw reads, no metamethods): string keys only, sorted by key; strings,
 * numbers and booleans as they are; nested tables as JSON values (json.h); functions,
 * userdata, cycles and nesting deeper than LOGGER_JSON_DEPTH as "<function>"-style
 * placeholders. Every record carries the process's service id and, last, a `pid` field (a
 * `pid` given in fields is ignored: the host's wins). Arguments are checked even when the
 * level is off; the fields are not read then. The fields are read under a protected call, so
 * the JSON values built for them are released even when Lua raises (out of memory). */
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "json.h"

#define LOGGER_STACK_FIELDS 32
#define LOGGER_JSON_MAX \
    (60 * 1024) /* a nested field whose text passes about this is "<too large>" */
#define LOGGER_JSON_DEPTH 16

/* ---- nested tables as JSON ---- */

/* One field's table on its way to JSON: the tables above the current one (for cycles) and
 * about how long its text is so far (each part counted with its separators, escapes not). */
typedef struct walk {
    const void *path[LOGGER_JSON_DEPTH];
    int depth;
    size_t size;
} walk;

static bool over(const walk *w) { return w->size > LOGGER_JSON_MAX; }

/* A number as an object key's text: integers without a fraction, others in the shortest form
 * that reads back the same, NaN and ±inf by name. */
static int number_key(char *out, size_t size, double d)
{
    if (!isfinite(d)) return snprintf(out, size, "%s", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    if (d == floor(d) && fabs(d) < 9007199254740992.0) return snprintf(out, size, "%.0f", d);
    int n = snprintf(out, size, "%.15g", d);
    if (strtod(out, NULL) != d) n = snprintf(out, size, "%.17g", d);
    return n;
}

/* 1..n with no other key: a JSON list. Empty tables are objects ({}). */
static bool is_list(lua_State *L, int t, size_t *n_out)
{
    size_t n = 0;
    double max = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            return false;
        }
        double k = lua_tonumber(L, -1);
        if (k < 1 || k != floor(k)) {
            lua_pop(L, 1);
            return false;
        }
        if (k > max) max = k;
        n++;
    }
    *n_out = n;
    return n > 0 && max == (double)n;
}

static json_t *placeholder(walk *w, const char *text)
{
    w->size += strlen(text) + 3;
    return json_string_nocheck(text);
}

/* A value that is not a table: a new reference, NULL when memory runs out. */
static json_t *leaf(lua_State *L, walk *w, int idx)
{
    size_t len;
    const char *s;
    switch (lua_type(L, idx)) {
    case LUA_TNIL: w->size += 5; return json_null();
    case LUA_TBOOLEAN: w->size += 6; return json_boolean(lua_toboolean(L, idx));
    case LUA_TNUMBER: w->size += 12; return sw_json_num(lua_tonumber(L, idx));
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &len);
        w->size += len + 3;
        return sw_json_strn(s, len);
    case LUA_TLIGHTUSERDATA: /* json.null */
        if (!lua_touserdata(L, idx)) {
            w->size += 5;
            return json_null();
        }
        /* fall through */
    default: {
        char text[32];
        snprintf(text, sizeof text, "<%s>", lua_typename(L, lua_type(L, idx)));
        return placeholder(w, text);
    }
    }
}

static int add_value(lua_State *L, walk *w, int idx, json_t *parent, const char *key, size_t klen);

/* The entries of the table t into the list or object v (already attached to its parent, so
 * what is built is reachable if Lua raises). 0, or -1 when memory runs out. */
static int fill(lua_State *L, walk *w, int t, json_t *v, size_t n)
{
    luaL_checkstack(L, 4, "logger: nested fields");
    if (json_is_array(v)) {
        for (size_t i = 1; i <= n && !over(w); i++) {
            lua_rawgeti(L, t, (int)i);
            int rc = add_value(L, w, lua_gettop(L), v, NULL, 0);
            lua_pop(L, 1);
            if (rc != 0) return -1;
        }
        return 0;
    }
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int kt = lua_type(L, -2), rc = 0;
        if (over(w)) {
            lua_pop(L, 2);
            break;
        }
        if (kt == LUA_TSTRING || kt == LUA_TNUMBER || kt == LUA_TBOOLEAN) {
            size_t len;
            char text[40];
            const char *k = text;
            if (kt == LUA_TSTRING) k = lua_tolstring(L, -2, &len);
            else /* never lua_tostring a key under lua_next: it would turn into a string */
                len =
                    (size_t)(kt == LUA_TNUMBER ? number_key(text, sizeof text, lua_tonumber(L, -2))
                                               : snprintf(text, sizeof text, "%s",
                                                          lua_toboolean(L, -2) ? "true" : "false"));
            w->size += len + 4;
            rc = add_value(L, w, lua_gettop(L), v, k, len);
        }
        lua_pop(L, 1);
        if (rc != 0) {
            lua_pop(L, 1);
            return -1;
        }
    }
    return 0;
}

/* The value at idx, converted and attached to parent: appended to a list (key NULL), or set
 * under key[0..klen) in an object. A table is attached before its entries are read. */
static int add_value(lua_State *L, walk *w, int idx, json_t *parent, const char *key, size_t klen)
{
    json_t *v = NULL;
    size_t n = 0;
    bool table = false;
    if (lua_type(L, idx) != LUA_TTABLE) v = leaf(L, w, idx);
    else {
        const void *self = lua_topointer(L, idx);
        for (int i = 0; i < w->depth && !v; i++)
            if (w->path[i] == self) v = placeholder(w, "<cycle>");
        if (!v && w->depth == LOGGER_JSON_DEPTH) v = placeholder(w, "<too deep>");
        if (!v) {
            table = true;
            w->size += 2;
            v = is_list(L, idx, &n) ? json_array() : json_object();
        }
    }
    int rc = key ? sw_json_setn(parent, key, klen, v) : json_array_append_new(parent, v);
    if (rc != 0 || !table) return rc;
    w->path[w->depth++] = lua_topointer(L, idx);
    rc = fill(L, w, idx, v, n); /* v is parent's now: still alive */
    w->depth--;
    return rc;
}

/* ---- fields ---- */

/* What the protected call reads the fields table into. */
typedef struct collect {
    sw_log_field *fields; /* room for every string key */
    size_t n;
    json_t *values; /* a list holding every table field's value (the fields borrow them) */
} collect;

/* The table at idx as a JSON field, or a placeholder when it is too large or memory runs out. */
static void table_field(lua_State *L, sw_log_field *f, int idx, collect *c)
{
    f->type = SW_LF_STR;
    f->s = "<out of memory>";
    if (!c->values && !(c->values = json_array())) return;
    walk w = {.depth = 0, .size = 0};
    size_t at = json_array_size(c->values);
    if (add_value(L, &w, idx, c->values, NULL, 0) != 0) return;
    if (over(&w)) {
        f->s = "<too large>";
        return;
    }
    f->type = SW_LF_JSON;
    f->j = json_array_get(c->values, at);
}

/* Fills f from the value on top of the stack, except tables (returns false). */
static bool scalar_field(lua_State *L, sw_log_field *f)
{
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        f->type = SW_LF_STR;
        f->s = lua_tostring(L, -1);
        return true;
    case LUA_TBOOLEAN:
        f->type = SW_LF_BOOL;
        f->b = lua_toboolean(L, -1);
        return true;
    case LUA_TNUMBER: {
        double d = lua_tonumber(L, -1);
        if (d == floor(d) && fabs(d) < 9.2e18) {
            f->type = SW_LF_INT;
            f->i = (int64_t)d;
        } else {
            f->type = SW_LF_NUM;
            f->d = d;
        }
        return true;
    }
    case LUA_TTABLE: return false;
    case LUA_TLIGHTUSERDATA:
        if (!lua_touserdata(L, -1)) {
            f->type = SW_LF_JSON;
            f->j = NULL; /* null */
            return true;
        }
        /* fall through */
    default:
        f->type = SW_LF_STR;
        f->s = lua_type(L, -1) == LUA_TFUNCTION ? "<function>"
               : lua_type(L, -1) == LUA_TTHREAD ? "<thread>"
                                                : "<userdata>";
        return true;
    }
}

/* Protected: reads the fields table (argument 2) into the collect (argument 1). Keys and
 * string values stay anchored by the table, which the caller holds. */
static int collect_fields(lua_State *L)
{
    collect *c = lua_touserdata(L, 1);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2);
            if (strcmp(key, "pid") != 0) {
                sw_log_field *f = &c->fields[c->n++];
                memset(f, 0, sizeof *f);
                f->key = key;
                if (!scalar_field(L, f)) table_field(L, f, lua_gettop(L), c);
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const sw_log_field *)a)->key, ((const sw_log_field *)b)->key);
}

/* ---- the Lua functions ---- */

static int l_log(lua_State *L);

/* Whether the table at idx holds this module's functions (raw read of "info"). */
static bool holds_logger(lua_State *L, int idx)
{
    lua_pushliteral(L, "info");
    lua_rawget(L, idx);
    bool ours = lua_tocfunction(L, -1) == l_log;
    lua_pop(L, 1);
    return ours;
}

/* logger:info(...) passes the logger itself: the module table, or the runtime's read-only
 * proxy of it (a table whose metatable's __index is the module table). */
static bool is_logger(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE) return false;
    if (holds_logger(L, idx)) return true;
    if (!lua_getmetatable(L, idx)) return false;
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    bool ours = lua_type(L, -1) == LUA_TTABLE && holds_logger(L, lua_gettop(L));
    lua_pop(L, 2);
    return ours;
}

static int l_log(lua_State *L)
{
    sw_log_level level = (sw_log_level)lua_tointeger(L, lua_upvalueindex(1));
    int base = is_logger(L, 1) ? 2 : 1;
    int t = lua_type(L, base);
    if (t != LUA_TSTRING && t != LUA_TNUMBER) luaL_typerror(L, base, "string");
    t = lua_type(L, base + 1);
    if (t != LUA_TNIL && t != LUA_TNONE && t != LUA_TTABLE)
        luaL_typerror(L, base + 1, "table or nil");
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (!ctx || !sw_log_enabled(ctx->log, level)) return 0;
    const char *msg = lua_tostring(L, base);

    sw_log_field stack_fields[LOGGER_STACK_FIELDS];
    collect c = {.fields = stack_fields, .n = 0, .values = NULL};
    if (t == LUA_TTABLE) {
        int ft = base + 1;
        size_t n_keys = 0;
        lua_pushnil(L);
        while (lua_next(L, ft)) {
            n_keys += lua_type(L, -2) == LUA_TSTRING;
            lua_pop(L, 1);
        }
        if (n_keys + 1 > LOGGER_STACK_FIELDS)
            c.fields = lua_newuserdata(L, (n_keys + 1) * sizeof *c.fields);
        lua_pushvalue(L, lua_upvalueindex(2)); /* collect_fields */
        lua_pushlightuserdata(L, &c);
        lua_pushvalue(L, ft);
        if (lua_pcall(L, 2, 0, 0) != 0) {
            json_decref(c.values);
            return lua_error(L); /* the same error, raised again */
        }
        qsort(c.fields, c.n, sizeof *c.fields, by_key);
    }
    sw_log_field *fields = c.fields;
    size_t n = c.n;
    memset(&fields[n], 0, sizeof fields[n]);
    fields[n].key = "pid";
    fields[n].type = SW_LF_STR;
    fields[n].s = ctx->pid ? ctx->pid : "";
    n++;
    sw_log_write(ctx->log, level, ctx->service, msg, fields, n);
    json_decref(c.values);
    return 0;
}

int sw_open_logger(lua_State *L)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    lua_createtable(L, 0, 4);
    for (int i = SW_LOG_DEBUG; i <= SW_LOG_ERROR; i++) {
        lua_pushinteger(L, i);
        lua_pushcfunction(L, collect_fields);
        lua_pushcclosure(L, l_log, 2);
        lua_setfield(L, -2, names[i]);
    }
    return 1;
}
