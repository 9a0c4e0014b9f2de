/* Lua `logger` (DESIGN §3, §7): logger.debug/info/warn/error(msg, fields?), also callable as
 * logger:info(msg, fields). Builds sw_log fields from the fields table without running any Lua
 * code (raw reads, no metamethods): string keys only, sorted by key; strings, numbers and
 * booleans as they are; nested tables as compact JSON; functions, userdata, cycles and nesting
 * deeper than LOGGER_JSON_DEPTH as "<function>"-style placeholders. Every record carries the
 * process's service id and, last, a `pid` field (a `pid` given in fields is ignored: the
 * host's wins). Arguments are checked even when the level is off; the fields are not read then.
 * Nothing allocated here outlives a raise: scratch memory is the C stack or Lua userdata. */
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define LOGGER_STACK_FIELDS 32
#define LOGGER_SCRATCH 2048          /* stack room shared by the JSON of all nested fields */
#define LOGGER_JSON_MAX (60 * 1024)  /* a nested field's JSON past this is "<too large>" */
#define LOGGER_JSON_DEPTH 16

/* ---- nested tables as JSON ---- */

/* A JSON writer over a fixed buffer that counts what does not fit, so the caller learns the
 * size it needs; it stops early once past LOGGER_JSON_MAX. */
typedef struct jbuf {
    char *p;
    size_t cap, len; /* len may exceed cap: bytes beyond cap are counted, not stored */
    const void *path[LOGGER_JSON_DEPTH];
    int depth;
} jbuf;

static bool j_over(const jbuf *j) { return j->len > LOGGER_JSON_MAX; }

static void j_put(jbuf *j, const char *s, size_t n)
{
    if (j->len + n <= j->cap) memcpy(j->p + j->len, s, n);
    j->len += n;
}

static void j_puts(jbuf *j, const char *s) { j_put(j, s, strlen(s)); }

/* ASCII-level escaping; bytes >= 0x80 go through as they are (log.c replaces invalid UTF-8). */
static void j_string(jbuf *j, const char *s, size_t n)
{
    j_put(j, "\"", 1);
    size_t start = 0, i;
    for (i = 0; i < n && !j_over(j); i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        j_put(j, s + start, i - start);
        start = i + 1;
        char esc[8];
        switch (c) {
        case '"': j_puts(j, "\\\""); break;
        case '\\': j_puts(j, "\\\\"); break;
        case '\n': j_puts(j, "\\n"); break;
        case '\r': j_puts(j, "\\r"); break;
        case '\t': j_puts(j, "\\t"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            j_puts(j, esc);
        }
    }
    j_put(j, s + start, i - start);
    j_put(j, "\"", 1);
}

/* A number as JSON (or as an object key's text): integers without a fraction, others in the
 * shortest form that reads back the same; NaN and ±inf as null (keys: their names). */
static int number_text(char *out, size_t size, double d)
{
    if (!isfinite(d)) return snprintf(out, size, "%s", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    if (d == floor(d) && fabs(d) < 9007199254740992.0) return snprintf(out, size, "%.0f", d);
    int n = snprintf(out, size, "%.15g", d);
    if (strtod(out, NULL) != d) n = snprintf(out, size, "%.17g", d);
    return n;
}

static void j_value(lua_State *L, jbuf *j, int idx);

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

static void j_table(lua_State *L, jbuf *j, int t)
{
    const void *self = lua_topointer(L, t);
    for (int i = 0; i < j->depth; i++)
        if (j->path[i] == self) {
            j_puts(j, "\"<cycle>\"");
            return;
        }
    if (j->depth == LOGGER_JSON_DEPTH) {
        j_puts(j, "\"<too deep>\"");
        return;
    }
    luaL_checkstack(L, 4, "logger: nested fields");
    j->path[j->depth++] = self;
    size_t n;
    if (is_list(L, t, &n)) {
        j_put(j, "[", 1);
        for (size_t i = 1; i <= n && !j_over(j); i++) {
            if (i > 1) j_put(j, ",", 1);
            lua_rawgeti(L, t, (int)i);
            j_value(L, j, lua_gettop(L));
            lua_pop(L, 1);
        }
        j_put(j, "]", 1);
    } else {
        bool first = true;
        j_put(j, "{", 1);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            int kt = lua_type(L, -2);
            if (j_over(j)) {
                lua_pop(L, 2);
                break;
            }
            if (kt == LUA_TSTRING || kt == LUA_TNUMBER || kt == LUA_TBOOLEAN) {
                if (!first) j_put(j, ",", 1);
                first = false;
                if (kt == LUA_TSTRING) {
                    size_t len;
                    const char *k = lua_tolstring(L, -2, &len);
                    j_string(j, k, len);
                } else { /* never lua_tostring a key under lua_next: it would turn into a string */
                    char text[40];
                    int len = kt == LUA_TNUMBER ? number_text(text, sizeof text, lua_tonumber(L, -2))
                                                : snprintf(text, sizeof text, "%s", lua_toboolean(L, -2) ? "true" : "false");
                    j_string(j, text, (size_t)len);
                }
                j_put(j, ":", 1);
                j_value(L, j, lua_gettop(L));
            }
            lua_pop(L, 1);
        }
        j_put(j, "}", 1);
    }
    j->depth--;
}

static void j_value(lua_State *L, jbuf *j, int idx)
{
    char text[40];
    size_t len;
    const char *s;
    switch (lua_type(L, idx)) {
    case LUA_TNIL: j_puts(j, "null"); break;
    case LUA_TBOOLEAN: j_puts(j, lua_toboolean(L, idx) ? "true" : "false"); break;
    case LUA_TNUMBER: {
        double d = lua_tonumber(L, idx);
        if (!isfinite(d)) j_puts(j, "null");
        else j_put(j, text, (size_t)number_text(text, sizeof text, d));
        break;
    }
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &len);
        j_string(j, s, len);
        break;
    case LUA_TTABLE: j_table(L, j, idx); break;
    case LUA_TLIGHTUSERDATA: /* json.null */
        if (!lua_touserdata(L, idx)) {
            j_puts(j, "null");
            break;
        }
        /* fall through */
    default:
        snprintf(text, sizeof text, "\"<%s>\"", lua_typename(L, lua_type(L, idx)));
        j_puts(j, text);
    }
}

/* ---- fields ---- */

typedef struct scratch {
    char *p;
    size_t left;
} scratch;

/* The table at idx as a JSON field value: in the stack scratch when it fits, else in a new
 * userdata left on the stack (anchored until the call returns), else a placeholder. */
static void json_field(lua_State *L, sw_log_field *f, int idx, scratch *sc)
{
    jbuf j = {.p = sc->p, .cap = sc->left, .len = 0, .depth = 0};
    j_value(L, &j, idx);
    if (j.len < sc->left) {
        sc->p[j.len] = '\0';
        f->type = SW_LF_JSON;
        f->s = sc->p;
        sc->p += j.len + 1;
        sc->left -= j.len + 1;
        return;
    }
    if (j_over(&j)) {
        f->type = SW_LF_STR;
        f->s = "<too large>";
        return;
    }
    size_t need = j.len;
    char *p = lua_newuserdata(L, need + 1);
    jbuf j2 = {.p = p, .cap = need, .len = 0, .depth = 0};
    j_value(L, &j2, idx);
    p[need] = '\0';
    f->type = SW_LF_JSON;
    f->s = p;
}

/* Fills f from the value on top of the stack, except tables (returns false: done later). */
static bool scalar_field(lua_State *L, sw_log_field *f)
{
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: f->type = SW_LF_STR; f->s = lua_tostring(L, -1); return true;
    case LUA_TBOOLEAN: f->type = SW_LF_BOOL; f->b = lua_toboolean(L, -1); return true;
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
            f->s = "null";
            return true;
        }
        /* fall through */
    default:
        f->type = SW_LF_STR;
        f->s = lua_type(L, -1) == LUA_TFUNCTION ? "<function>" : lua_type(L, -1) == LUA_TTHREAD ? "<thread>" : "<userdata>";
        return true;
    }
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const sw_log_field *)a)->key, ((const sw_log_field *)b)->key);
}

/* Reads the fields table at ft into out (room for every string key). Returns the count. */
static size_t read_fields(lua_State *L, int ft, sw_log_field *out, char *stack_scratch)
{
    size_t n = 0, n_tables = 0;
    lua_pushnil(L);
    while (lua_next(L, ft)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2); /* anchored by the fields table */
            if (strcmp(key, "pid") != 0) {
                memset(&out[n], 0, sizeof out[n]);
                out[n].key = key;
                if (!scalar_field(L, &out[n])) {
                    out[n].type = SW_LF_JSON;
                    out[n].s = NULL; /* to do below, where the stack is free to grow */
                    n_tables++;
                }
                n++;
            }
        }
        lua_pop(L, 1);
    }
    scratch sc = {.p = stack_scratch, .left = LOGGER_SCRATCH};
    for (size_t i = 0; i < n && n_tables; i++) {
        if (out[i].type != SW_LF_JSON || out[i].s) continue;
        lua_pushstring(L, out[i].key);
        lua_rawget(L, ft);
        int v = lua_gettop(L);
        json_field(L, &out[i], v, &sc);
        lua_remove(L, v); /* a userdata made by json_field stays, below the top */
        n_tables--;
    }
    qsort(out, n, sizeof *out, by_key);
    return n;
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
    if (t != LUA_TNIL && t != LUA_TNONE && t != LUA_TTABLE) luaL_typerror(L, base + 1, "table or nil");
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (!ctx || !sw_log_enabled(ctx->log, level)) return 0;
    const char *msg = lua_tostring(L, base);

    sw_log_field stack_fields[LOGGER_STACK_FIELDS];
    sw_log_field *fields = stack_fields;
    char stack_scratch[LOGGER_SCRATCH];
    size_t n = 0;
    if (t == LUA_TTABLE) {
        int ft = base + 1;
        size_t n_keys = 0;
        lua_pushnil(L);
        while (lua_next(L, ft)) {
            n_keys += lua_type(L, -2) == LUA_TSTRING;
            lua_pop(L, 1);
        }
        if (n_keys + 1 > LOGGER_STACK_FIELDS) fields = lua_newuserdata(L, (n_keys + 1) * sizeof *fields);
        n = read_fields(L, ft, fields, stack_scratch);
    }
    memset(&fields[n], 0, sizeof fields[n]);
    fields[n].key = "pid";
    fields[n].type = SW_LF_STR;
    fields[n].s = ctx->pid ? ctx->pid : "";
    n++;
    sw_log_write(ctx->log, level, ctx->service, msg, fields, n);
    return 0;
}

int sw_open_logger(lua_State *L)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    lua_createtable(L, 0, 4);
    for (int i = SW_LOG_DEBUG; i <= SW_LOG_ERROR; i++) {
        lua_pushinteger(L, i);
        lua_pushcclosure(L, l_log, 1);
        lua_setfield(L, -2, names[i]);
    }
    return 1;
}
