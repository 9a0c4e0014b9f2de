/* `require` and `package` (docs/lua-api.md "require and imports"): host modules, the
 * per-process package.loaded / package.preload, and library.lua imports, whole libraries or
 * files of their module trees. A name resolves in the scope of the code that calls require: a
 * library's file sees its own tree and its own imports, the process's code the entry's. Every
 * file is text the registry read at load; nothing here touches the file system. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "kinds.h"
#include "proc.h"
#include "runtime.h"
#include "vm.h"

/* Registry keys (addresses): the package table, chunk name -> library entry (whose scope its
 * code requires in), the files being loaded (cycle detection), the chain of names loading, and
 * file -> {name, value} of each file loaded (one file required by two names runs once). */
static const char PACKAGE_KEY, LOADED_KEY, SCOPES_KEY, LOADING_KEY, CHAIN_KEY, FILES_KEY;

/* Names that are not host modules but the sandbox's compat globals, as Lua's require returns
 * its standard libraries. */
static const char *const compat_names[] = {"os", "debug", "jit", "_G", NULL};

static int api_require(lua_State *L);

/* Pushes the registry table under key, made on first use. */
static void push_table(lua_State *L, const void *key)
{
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/* The process's package table: loaded and preload as in Lua; no path searched. */
static void push_package(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&PACKAGE_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_createtable(L, 0, 5);
    push_table(L, &LOADED_KEY);
    lua_setfield(L, -2, "loaded");
    lua_newtable(L);
    lua_setfield(L, -2, "preload");
    lua_pushliteral(L, "/\n;\n?\n!\n-\n");
    lua_setfield(L, -2, "config");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_pushlightuserdata(L, (void *)&PACKAGE_KEY);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/* ---- scope: whose imports a require sees ---- */

/* The library whose file is loading now (innermost), or NULL. */
static const sw_entry *loading_library(lua_State *L)
{
    push_table(L, &CHAIN_KEY);
    size_t n = lua_objlen(L, -1);
    const sw_entry *lib = NULL;
    if (n) {
        lua_rawgeti(L, -1, (int)n);
        lua_getfield(L, -1, "lib");
        lib = lua_touserdata(L, -1);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return lib;
}

/* The library the calling code belongs to (NULL: the process's own code): the first Lua
 * function up the stack, by its chunk name. Reaching require itself first means a chunk
 * tail-called require (`return require "x"`): the module loading is the caller. */
static const sw_entry *caller_library(lua_State *L)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sf", &ar);
        bool is_require = lua_tocfunction(L, -1) == api_require;
        lua_pop(L, 1);
        if (is_require) return loading_library(L);
        if (ar.what[0] == 'C') continue;
        push_table(L, &SCOPES_KEY);
        lua_getfield(L, -1, ar.source);
        const sw_entry *lib = lua_touserdata(L, -1);
        lua_pop(L, 2);
        return lib;
    }
    return loading_library(L);
}

static bool match_alias(const char *name, const char *alias, const char **rest)
{
    size_t n = strlen(alias);
    if (strncmp(name, alias, n) != 0 || (name[n] != 0 && name[n] != '.')) return false;
    *rest = name[n] ? name + n + 1 : "";
    return true;
}

/* The library that name falls in, seen from scope (NULL: the process's entry): the longest
 * import alias that is name or a dotted prefix of it, or the scope library's own name. *rest
 * gets the part after it ("" for the library itself). */
static const sw_entry *resolve(lua_State *L, const sw_entry *scope, const char *name,
                               const char **rest)
{
    const sw_imports *imps =
        scope ? &scope->as.library_lua.imports : &sw_proc_of(L)->entry->as.process_lua.imports;
    const sw_entry *best = NULL;
    size_t best_len = 0;
    const char *r;
    for (size_t i = 0; i < imps->n; i++) {
        size_t n = strlen(imps->v[i].alias);
        if (n > best_len && match_alias(name, imps->v[i].alias, &r)) {
            best = imps->v[i].library.target, best_len = n, *rest = r;
        }
    }
    const sw_library_lua *own = scope ? &scope->as.library_lua : NULL;
    const char *self = !own               ? NULL
                       : own->module      ? own->module
                       : own->source.tree ? own->source.tree->name
                                          : NULL;
    if (self && strlen(self) > best_len && match_alias(name, self, &r)) best = scope, *rest = r;
    return best;
}

/* ---- loading a file ---- */

typedef struct module_file {
    const sw_entry *lib;
    char chunkname[512];
    const char *text;
    size_t len;
    const char *key; /* identifies the file for cycle detection */
} module_file;

/* The file of lib for rest; raises "module not found" naming what was looked for. */
static void find_file(lua_State *L, const char *name, const sw_entry *lib, const char *rest,
                      module_file *f)
{
    const sw_source *src = &lib->as.library_lua.source;
    f->lib = lib;
    if (!*rest) {
        if (!src->text)
            luaL_error(L, "module '%s' not found: %s has no %s.lua or init.lua", name, lib->id,
                       src->tree->name);
        sw_entry_chunkname(lib, f->chunkname, sizeof f->chunkname);
        f->text = src->text, f->len = src->len, f->key = lib->id;
        return;
    }
    const sw_tree_file *t = src->tree ? sw_lib_tree_find(src->tree, rest) : NULL;
    if (!t && !src->tree)
        luaL_error(L, "module '%s' not found: %s is a single file, not a module tree", name,
                   lib->id);
    if (!t) {
        luaL_gsub(L, rest, ".", "/");
        luaL_error(L, "module '%s' not found: no %s.lua or %s/init.lua in %s", name,
                   lua_tostring(L, -1), lua_tostring(L, -1), lib->id);
    }
    snprintf(f->chunkname, sizeof f->chunkname, "@%s", t->path);
    f->text = t->text, f->len = t->len, f->key = t->path;
}

/* Raises "require cycle: a -> b -> a" when f is already loading. */
static void check_cycle(lua_State *L, const char *name, const module_file *f)
{
    push_table(L, &LOADING_KEY);
    lua_getfield(L, -1, f->key);
    bool loading = !lua_isnil(L, -1);
    lua_pop(L, 2);
    if (!loading) return;
    push_table(L, &CHAIN_KEY);
    int chain = lua_gettop(L);
    lua_pushliteral(L, "require cycle: "); /* the text so far, kept on top */
    bool started = false;
    for (int i = 1; i <= (int)lua_objlen(L, chain); i++) {
        lua_rawgeti(L, chain, i);
        lua_getfield(L, -1, "key");
        started |= strcmp(lua_tostring(L, -1), f->key) == 0;
        lua_pop(L, 1);
        if (started) {
            lua_getfield(L, -1, "name");
            lua_remove(L, -2);
            lua_pushliteral(L, " -> ");
            lua_concat(L, 3);
        } else {
            lua_pop(L, 1);
        }
    }
    lua_pushstring(L, name);
    lua_concat(L, 2);
    lua_error(L);
}

/* Marks f loading (or not) and pushes/pops its entry on the chain. */
static void set_loading(lua_State *L, const char *name, const module_file *f, bool on)
{
    push_table(L, &LOADING_KEY);
    if (on) lua_pushboolean(L, 1);
    else lua_pushnil(L);
    lua_setfield(L, -2, f->key);
    lua_pop(L, 1);
    push_table(L, &CHAIN_KEY);
    int n = (int)lua_objlen(L, -1);
    if (on) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, f->key);
        lua_setfield(L, -2, "key");
        lua_pushlightuserdata(L, (void *)f->lib);
        lua_setfield(L, -2, "lib");
        lua_rawseti(L, -2, n + 1);
    } else {
        lua_pushnil(L);
        lua_rawseti(L, -2, n);
    }
    lua_pop(L, 1);
}

/* Compiles (once per runtime) and pushes f's chunk, remembering which library it belongs to. */
static void push_chunk(lua_State *L, const module_file *f)
{
    char err[512];
    size_t len;
    const unsigned char *bc = sw_runtime_code_text(sw_proc_of(L)->rt, f->chunkname, f->text, f->len,
                                                   &len, err, sizeof err);
    if (!bc || sw_vm_load_compiled(sw_vm_of(L), f->chunkname, bc, len, err, sizeof err) != 0)
        luaL_error(L, "require: %s", err);
    lua_xmove(sw_vm_lua(sw_vm_of(L)), L, 1);
    push_table(L, &SCOPES_KEY);
    lua_pushlightuserdata(L, (void *)f->lib);
    lua_setfield(L, -2, f->chunkname);
    lua_pop(L, 1);
}

/* Calls the loader at the top with name as `...`; stores and pushes the module's value as Lua
 * does: what it returns, else what it put in package.loaded[name], else true. */
static int finish_load(lua_State *L, const char *name, const module_file *f)
{
    lua_pushstring(L, name);
    if (f) set_loading(L, name, f, true);
    int rc = lua_pcall(L, 1, 1, 0);
    if (f) set_loading(L, name, f, false);
    if (rc != 0) return lua_error(L);
    push_table(L, &LOADED_KEY);
    if (!lua_isnil(L, -2)) {
        lua_pushvalue(L, -2);
        lua_setfield(L, -2, name);
    }
    lua_getfield(L, -1, name);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);
    }
    if (f) {
        push_table(L, &FILES_KEY);
        lua_createtable(L, 0, 2);
        lua_pushstring(L, name);
        lua_setfield(L, -2, "name");
        lua_pushvalue(L, -3);
        lua_setfield(L, -2, "value");
        lua_setfield(L, -2, f->key);
        lua_pop(L, 1);
    }
    return 1;
}

/* Pushes f's value if it was loaded under another name that still holds it (clearing
 * package.loaded[name] forces a reload, as in Lua); false if not. */
static bool push_loaded_file(lua_State *L, const char *name, const module_file *f)
{
    push_table(L, &FILES_KEY);
    lua_getfield(L, -1, f->key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 2);
        return false;
    }
    push_table(L, &LOADED_KEY);
    lua_getfield(L, -2, "name");
    lua_rawget(L, -2);
    lua_getfield(L, -3, "value");
    if (!lua_rawequal(L, -1, -2)) {
        lua_pop(L, 5);
        return false;
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, name);
    return true;
}

static bool is_builtin(const char *name)
{
    for (const char *const *m = sw_host_module_names; *m; m++) /* the registry's list */
        if (strcmp(*m, name) == 0) return true;
    for (const char *const *m = compat_names; *m; m++)
        if (strcmp(*m, name) == 0) return true;
    return false;
}

static int api_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_settop(L, 1);
    push_table(L, &LOADED_KEY);
    lua_getfield(L, -1, name);
    if (!lua_isnil(L, -1)) return 1;
    if (is_builtin(name)) {
        lua_getglobal(L, name);
        return 1;
    }
    push_package(L);
    lua_getfield(L, -1, "preload");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, name);
        if (!lua_isnil(L, -1)) return finish_load(L, name, NULL);
    }
    lua_settop(L, 1);
    const char *rest = NULL;
    const sw_entry *lib = resolve(L, caller_library(L), name, &rest);
    if (!lib) return luaL_error(L, "module '%s' not found: no such host module or import", name);
    module_file f;
    find_file(L, name, lib, rest, &f);
    if (push_loaded_file(L, name, &f)) return 1;
    check_cycle(L, name, &f);
    push_chunk(L, &f);
    return finish_load(L, name, &f);
}

int sw_open_require(lua_State *L)
{
    lua_pushcfunction(L, api_require);
    return 1;
}

int sw_open_package(lua_State *L)
{
    push_package(L);
    return 1;
}
