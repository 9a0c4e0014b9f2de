/* Lua `registry` (docs/lua-api.md): read-only views of the process's registry snapshot
 * (sw_proc_ctx_of(L)->registry, immutable while the process's code runs).
 *   registry.get(id)        -> entry | nil, "no entry <id>"
 *                              | nil, "permission denied: registry.read on <id>"
 *   registry.find(criteria) -> list of entries matching every criterion, in load order;
 *       criteria keys: kind, namespace, name (exact strings) and "meta.<a.b.c>" (the merged
 *       meta value at that path equals the given string, number or boolean; no coercion).
 *       An unknown criterion, an unknown kind or a value of another type raises. Entries
 *       the process may not read (registry.read on the id) are left out.
 * An entry is a new deep copy on every call: {id, name, namespace, kind, meta = {…},
 * data = {…}}; data holds every field of the entry's YAML mapping but name, kind and meta, as
 * written (no defaults). YAML to Lua: null -> nil (a key with null is absent, a null in a list
 * leaves a hole), booleans, numbers (ints and floats alike), strings; mapping keys are always
 * strings (their text: the YAML tree compares keys by text); lists are arrays from 1. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "message.h"

#define REGISTRY_STACK_CRITERIA 8

#define READ_ACTION "registry.read"

/* Security guard for reading one entry (registry.get and every entry registry.find returns;
 * docs/security.md: action registry.read, resource = the entry id). */
static bool allowed_to_read(lua_State *L, const char *id)
{
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    return !ctx || !ctx->allowed || ctx->allowed(L, READ_ACTION, id);
}

/* The same for registry.find's filter: an entry left out is not a refused call, so it is not
 * audited (docs/security.md "Audit"). */
static bool visible(lua_State *L, const char *id)
{
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (!ctx || !ctx->allowed) return true;
    return ctx->visible ? ctx->visible(L, READ_ACTION, id) : ctx->allowed(L, READ_ACTION, id);
}

int sw_push_denied(lua_State *L, const char *action, const char *resource)
{
    lua_pushnil(L);
    lua_pushfstring(L, "permission denied: %s on %s", action, resource);
    return 2;
}

/* ---- YAML nodes to Lua values ---- */

/* Pushes the Lua value of n; nil for a YAML null (or no node). Depth is bounded by the YAML
 * tree's SW_YAML_MAX_DEPTH; aliased nodes are copied once per use. */
static bool is_entry_key(const sw_node *k)
{
    return k->type == SW_NODE_SCALAR &&
           (strcmp(k->str, "name") == 0 || strcmp(k->str, "kind") == 0 ||
            strcmp(k->str, "meta") == 0);
}

static void push_entry(lua_State *L, const sw_entry *e)
{
    lua_createtable(L, 0, 6);
    lua_pushstring(L, e->id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, e->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, e->ns);
    lua_setfield(L, -2, "namespace");
    lua_pushstring(L, sw_kind_name(e->kind));
    lua_setfield(L, -2, "kind");
    if (e->meta) sw_push_node(L, e->meta);
    else lua_createtable(L, 0, 0);
    lua_setfield(L, -2, "meta");
    const sw_node *m = e->node;
    size_t n = m && m->type == SW_NODE_MAP ? m->n : 0;
    lua_createtable(L, 0, (int)n);
    for (size_t i = 0; i < n; i++) {
        const sw_node *k = sw_node_key(m, i), *v = sw_node_val(m, i);
        if (is_entry_key(k) || k->type != SW_NODE_SCALAR) continue;
        if (!v || (v->type == SW_NODE_SCALAR && v->scalar == SW_SCALAR_NULL)) continue;
        lua_pushlstring(L, k->str, k->len);
        sw_push_node(L, v);
        lua_rawset(L, -3);
    }
    lua_setfield(L, -2, "data");
}

/* ---- registry.get ---- */

static int l_get(lua_State *L)
{
    const char *id = luaL_checkstring(L, 1);
    /* Checked before the lookup, so a denied process cannot learn which ids exist. */
    if (!allowed_to_read(L, id)) return sw_push_denied(L, READ_ACTION, id);
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    const sw_entry *e = ctx && ctx->registry ? sw_registry_get(ctx->registry, id) : NULL;
    if (!e) {
        lua_pushnil(L);
        lua_pushfstring(L, "no entry %s", id);
        return 2;
    }
    push_entry(L, e);
    return 1;
}

/* ---- registry.find ---- */

typedef enum { CRIT_KIND, CRIT_NAMESPACE, CRIT_NAME, CRIT_META } crit_what;

typedef struct crit {
    crit_what what;
    const char *path; /* CRIT_META: the path after "meta." (anchored by the criteria table) */
    int vtype;        /* LUA_TSTRING, LUA_TNUMBER, LUA_TBOOLEAN */
    const char *s;
    size_t len;
    double num;
    bool b;
    int kind; /* CRIT_KIND */
} crit;

static void crit_error(lua_State *L, const char *fmt, const char *arg)
{
    lua_pushfstring(L, fmt, arg);
    luaL_argerror(L, 1, lua_tostring(L, -1));
}

/* "a.b.c": non-empty segments only. */
static bool valid_path(const char *p)
{
    if (!*p) return false;
    for (const char *s = p; *s; s++)
        if (*s == '.' && (s == p || s[1] == '.' || s[1] == '\0')) return false;
    return true;
}

/* Reads the criterion under lua_next (key at -2, value at -1) into c. Raises when invalid. */
static void read_crit(lua_State *L, crit *c)
{
    if (lua_type(L, -2) != LUA_TSTRING) luaL_argerror(L, 1, "criteria keys must be strings");
    const char *key = lua_tostring(L, -2);
    memset(c, 0, sizeof *c);
    if (strcmp(key, "kind") == 0) c->what = CRIT_KIND;
    else if (strcmp(key, "namespace") == 0) c->what = CRIT_NAMESPACE;
    else if (strcmp(key, "name") == 0) c->what = CRIT_NAME;
    else if (strncmp(key, "meta.", 5) == 0 && valid_path(key + 5)) {
        c->what = CRIT_META;
        c->path = key + 5;
    } else
        crit_error(L, "unknown criterion '%s' (expected kind, namespace, name or meta.<path>)",
                   key);
    c->vtype = lua_type(L, -1);
    if (c->what != CRIT_META && c->vtype != LUA_TSTRING)
        crit_error(L, "criterion '%s' must be a string", key);
    switch (c->vtype) {
    case LUA_TSTRING: c->s = lua_tolstring(L, -1, &c->len); break; /* anchored by the table */
    case LUA_TNUMBER: c->num = lua_tonumber(L, -1); break;
    case LUA_TBOOLEAN: c->b = lua_toboolean(L, -1); break;
    default: crit_error(L, "criterion '%s' must be a string, number or boolean", key);
    }
    if (c->what == CRIT_KIND && (c->kind = sw_kind_from_name(c->s)) < 0)
        crit_error(L, "unknown kind '%s'", c->s);
}

/* The value of map at a dotted path, or NULL. */
static const sw_node *node_at(const sw_node *n, const char *path)
{
    while (n && *path) {
        if (n->type != SW_NODE_MAP) return NULL;
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        const sw_node *next = NULL;
        for (size_t i = 0; i < n->n && !next; i++) {
            const sw_node *k = sw_node_key(n, i);
            if (k->type == SW_NODE_SCALAR && k->len == len && memcmp(k->str, path, len) == 0)
                next = sw_node_val(n, i);
        }
        n = next;
        path += len + (dot ? 1 : 0);
    }
    return n;
}

static bool meta_matches(const sw_entry *e, const crit *c)
{
    const sw_node *v = node_at(e->meta, c->path);
    if (!v || v->type != SW_NODE_SCALAR) return false;
    switch (c->vtype) {
    case LUA_TSTRING:
        return v->scalar == SW_SCALAR_STRING && v->len == c->len &&
               memcmp(v->str, c->s, c->len) == 0;
    case LUA_TNUMBER:
        return (v->scalar == SW_SCALAR_INT || v->scalar == SW_SCALAR_FLOAT) && v->num == c->num;
    default: return v->scalar == SW_SCALAR_BOOL && (v->num != 0) == c->b;
    }
}

static bool matches(const sw_entry *e, const crit *cs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const crit *c = &cs[i];
        switch (c->what) {
        case CRIT_KIND:
            if ((int)e->kind != c->kind) return false;
            break;
        case CRIT_NAMESPACE:
            if (strcmp(e->ns, c->s) != 0) return false;
            break;
        case CRIT_NAME:
            if (strcmp(e->name, c->s) != 0) return false;
            break;
        case CRIT_META:
            if (!meta_matches(e, c)) return false;
            break;
        }
    }
    return true;
}

static int l_find(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        n++;
        lua_pop(L, 1);
    }
    crit stack_crits[REGISTRY_STACK_CRITERIA];
    crit *cs = n <= REGISTRY_STACK_CRITERIA ? stack_crits : lua_newuserdata(L, n * sizeof *cs);
    size_t i = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        read_crit(L, &cs[i++]);
        lua_pop(L, 1);
    }
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    const sw_registry *r = ctx ? ctx->registry : NULL;
    lua_newtable(L);
    int out = 0;
    for (size_t k = 0; r && k < r->n_entries; k++) {
        const sw_entry *e = r->entries[k];
        if (!matches(e, cs, n) || !visible(L, e->id)) continue;
        push_entry(L, e);
        lua_rawseti(L, -2, ++out);
    }
    return 1;
}

int sw_open_registry(lua_State *L)
{
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, l_get);
    lua_setfield(L, -2, "get");
    lua_pushcfunction(L, l_find);
    lua_setfield(L, -2, "find");
    return 1;
}
