/* The Lua API and its reference cannot drift apart (docs/lua-api.md): every function and
 * table each host module gives a process (sw_api_libs, opened as a process opens them) is
 * named in docs/lua-api.md as `module.name`, and every `module.name(...)` the reference calls,
 * for a host module, exists. The module tables are read through their read-only proxies from
 * C, which sees the real table behind __index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "api.h"
#include "proc.h"

#define MAX_NAMES 1024

/* Opening a module reads the process and its context; blank ones will do (no function is
 * called). They stand in for the runtime's (proc.c), linked with --allow-multiple-definition. */
static sw_proc_ctx ctx;
static sw_proc proc;
const sw_proc_ctx *sw_proc_ctx_of(lua_State *L)
{
    (void)L;
    return &ctx;
}
sw_proc *sw_proc_of(lua_State *L)
{
    (void)L;
    return &proc;
}

typedef struct names {
    char *v[MAX_NAMES];
    size_t n;
} names;

static void add(names *ns, const char *module, const char *key)
{
    if (ns->n == MAX_NAMES) fail_msg("more than %d API names", MAX_NAMES);
    size_t len = strlen(module) + strlen(key) + 2;
    ns->v[ns->n] = malloc(len);
    snprintf(ns->v[ns->n++], len, "%s.%s", module, key);
}


/* The table behind a read-only proxy at the top of the stack (or the table itself). */
static void real_table(lua_State *L)
{
    if (lua_getmetatable(L, -1)) {
        lua_getfield(L, -1, "__index");
        if (lua_istable(L, -1)) {
            lua_replace(L, -3);
            lua_pop(L, 1);
            return;
        }
        lua_pop(L, 2);
    }
}

/* module.key for each function and table field of the module at the top of the stack, and
 * module.key.sub for those of its tables (process.registry.register). */
static void collect(lua_State *L, const char *module, names *ns, int depth)
{
    real_table(L);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_tostring(L, -2)[0] != '_') {
            const char *key = lua_tostring(L, -2);
            int t = lua_type(L, -1);
            if (t == LUA_TFUNCTION || t == LUA_TTABLE) add(ns, module, key);
            if (t == LUA_TTABLE && depth == 0) {
                char sub[128];
                snprintf(sub, sizeof sub, "%s.%s", module, key);
                lua_pushvalue(L, -1); /* collect pops what it walks: keep the value for next */
                collect(L, sub, ns, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* The modules checked here: not `require`, `coroutine` and `os`, which extend Lua's own (their
 * additions are in docs/lua-api.md "require and imports", "coroutine.spawn" and "The sandbox"). */
static bool checked(const char *module)
{
    return strcmp(module, "require") != 0 && strcmp(module, "coroutine") != 0 &&
           strcmp(module, "os") != 0;
}

/* A state with every host module opened as a process opens it, each a global. */
static lua_State *api_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    for (const sw_vm_lib *lib = sw_api_libs; lib->name; lib++) {
        if (!checked(lib->name)) continue;
        lua_pushcfunction(L, lib->open);
        if (lua_pcall(L, 0, 1, 0) != 0) fail_msg("opening %s: %s", lib->name, lua_tostring(L, -1));
        lua_setglobal(L, lib->name);
    }
    return L;
}

/* The names the modules list. A module that makes its functions on first use (process, to
 * keep spawning cheap) lists none: those are checked the other way only. */
static names *api_names(void)
{
    names *ns = calloc(1, sizeof *ns);
    lua_State *L = api_state();
    for (const sw_vm_lib *lib = sw_api_libs; lib->name; lib++) {
        if (!checked(lib->name)) continue;
        lua_getglobal(L, lib->name);
        if (lua_istable(L, -1)) collect(L, lib->name, ns, 0);
        else lua_pop(L, 1);
    }
    lua_close(L);
    return ns;
}

/* Whether a.b.c exists in L, looked up as Lua code would (so lazy modules make it). */
static bool exists(lua_State *L, const char *dotted)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dotted);
    char *save = NULL, *part = strtok_r(buf, ".", &save);
    lua_getglobal(L, part);
    while ((part = strtok_r(NULL, ".", &save)) != NULL) {
        if (!lua_istable(L, -1)) break;
        lua_getfield(L, -1, part);
        lua_replace(L, -2);
    }
    bool found = !lua_isnil(L, -1) && part == NULL;
    lua_pop(L, 1);
    return found;
}

static char *read_doc(void)
{
    FILE *f = fopen(SOURCE_DIR "/docs/lua-api.md", "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static bool is_module(const char *name, size_t len)
{
    for (const sw_vm_lib *lib = sw_api_libs; lib->name; lib++)
        if (strlen(lib->name) == len && strncmp(lib->name, name, len) == 0)
            return checked(lib->name);
    return false;
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Every name in the API is in the reference, as `module.name` followed by a non-word byte. */
static void test_every_function_is_documented(void **state)
{
    (void)state;
    names *ns = api_names();
    const char *doc = read_doc();
    size_t missing = 0;
    for (size_t i = 0; i < ns->n; i++) {
        const char *at = doc;
        size_t len = strlen(ns->v[i]);
        bool found = false;
        while (!found && (at = strstr(at, ns->v[i])) != NULL) {
            found = (at == doc || !word_char(at[-1])) && !word_char(at[len]);
            at += len;
        }
        if (!found) {
            print_message("docs/lua-api.md does not name %s\n", ns->v[i]);
            missing++;
        }
    }
    assert_true(ns->n >= 20); /* the eager modules: time, json, security, net, http, ... */
    assert_int_equal(missing, 0);
    for (size_t i = 0; i < ns->n; i++) free(ns->v[i]);
    free(ns);
}

/* Every `module.name(` the reference writes in code, for a host module, exists. */
static void test_every_documented_function_exists(void **state)
{
    (void)state;
    lua_State *L = api_state();
    const char *doc = read_doc();
    size_t unknown = 0;
    for (const char *p = doc; *p; p++) {
        if (p > doc && (word_char(p[-1]) || p[-1] == '.' || p[-1] == ':')) continue;
        const char *dot = p;
        while (word_char(*dot)) dot++;
        if (*dot != '.' || !is_module(p, (size_t)(dot - p))) continue;
        const char *end = dot + 1;
        while (word_char(*end) || (*end == '.' && word_char(end[1]))) end++;
        if (*end != '(' && *end != '{') continue; /* a call: module.name(...) or name{...} */
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(end - p), p);
        if (!exists(L, name)) {
            print_message("docs/lua-api.md calls %s, which no module has\n", name);
            unknown++;
        }
        p = end;
    }
    lua_close(L);
    assert_int_equal(unknown, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_function_is_documented),
        cmocka_unit_test(test_every_documented_function_exists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
