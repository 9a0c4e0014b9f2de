/* Field tables and defaults of every kind; custom readers for source and imports. */
#include "kinds.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_vars.h"
#include "policy.h"
#include "readfile.h"
#include "units.h"

#define N(a)             (sizeof(a) / sizeof *(a))
#define MAX_SOURCE_BYTES (16u * 1024 * 1024)

static const char *const entry_keys[] = {"name", "kind", "meta", NULL};

const char *const sw_host_module_names[] = {
    "process",    "channel", "time", "logger",    "errors", "json",  "registry", "security",
    "net",        "funcs",   "http", "coroutine", "string", "table", "math",     "bit",
    "supervisor", "service", "env",  "uuid",      "io",     "fs",    "exec",     NULL};

/* ---- source ---- */

static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    return strncmp(root, path, n) == 0 &&
           (path[n] == '/' || path[n] == 0 || (n == 1 && root[0] == '/'));
}

static void load_source_file(sw_parse *p, const sw_node *n, sw_source *src)
{
    const char *rel = n->str + 7;
    if (!*rel) {
        sw_parse_error(p, n, "file:// needs a path relative to the YAML file");
        return;
    }
    if (rel[0] == '/') {
        sw_parse_error(p, n, "file://%s: the path must be relative to the YAML file", rel);
        return;
    }
    char joined[PATH_MAX], real[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s", p->dir, rel);
    if (!realpath(joined, real)) {
        sw_parse_error(p, n, "file://%s: %s", rel, strerror(errno));
        return;
    }
    if (!p->app_root || !inside(p->app_root, real)) {
        sw_parse_error(p, n, "file://%s resolves outside the app directory", rel);
        return;
    }
    const char *why = NULL;
    size_t len = 0;
    /* real has no symlink left in it: one appearing now is a swap, refused (O_NOFOLLOW) */
    char *text = sw_read_regular_file(real, MAX_SOURCE_BYTES, "larger than 16MB", true, &len, &why);
    if (!text) {
        sw_parse_error(p, n, "file://%s: %s", rel, why);
        return;
    }
    src->path = sw_arena_strdup(p->arena, joined);
    src->text = sw_arena_strndup(p->arena, text, len);
    src->len = len;
    free(text);
}

static void parse_source(sw_parse *p, const sw_node *n, void *dst)
{
    sw_source *src = dst;
    if (!sw_node_is_string(n)) {
        sw_parse_error(p, n, "expected file://path or Lua code, got %s", sw_node_describe(n));
        return;
    }
    if (strncmp(n->str, "file://", 7) == 0) {
        load_source_file(p, n, src);
        return;
    }
    if (n->len == 0) {
        sw_parse_error(p, n, "empty source");
        return;
    }
    src->path = NULL;
    src->text = n->str;
    src->len = n->len;
}

/* ---- imports ---- */

static bool lua_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static void parse_imports(sw_parse *p, const sw_node *n, void *dst)
{
    sw_imports *imps = dst;
    if (n->type != SW_NODE_MAP) {
        sw_parse_error(p, n, "expected a mapping {alias: library id}, got %s", sw_node_describe(n));
        return;
    }
    imps->n = n->n;
    imps->v = sw_arena_alloc(p->arena, (n->n ? n->n : 1) * sizeof *imps->v);
    for (size_t i = 0; i < n->n; i++) {
        const sw_node *key = sw_node_key(n, i);
        sw_import *imp = &imps->v[i];
        imp->alias = key->str;
        size_t saved = sw_path_push(p, key->str);
        bool shadows = false;
        for (const char *const *m = sw_host_module_names; *m; m++)
            shadows |= strcmp(*m, key->str) == 0;
        if (!lua_identifier(key->str)) sw_parse_error(p, key, "alias must be a Lua identifier");
        else if (shadows) sw_parse_error(p, key, "alias \"%s\" shadows a host module", key->str);
        sw_parse_ref(p, sw_node_val(n, i), SW_KINDBIT(SW_KIND_LIBRARY_LUA), false, &imp->library);
        sw_path_pop(p, saved);
    }
}

/* ---- process.lua / function.lua / library.lua / process.host ---- */

#define MB(f) offsetof(sw_process_lua, limits.mailbox.f) - offsetof(sw_process_lua, limits.mailbox)
static const sw_field mailbox_fields[] = {
    {.name = "messages", .type = SW_F_INT, .offset = MB(messages), .min = 1, .max = 1e9},
    {.name = "bytes", .type = SW_F_SIZE, .offset = MB(bytes), .flags = SW_F_POSITIVE},
};
static const sw_schema mailbox_schema = {mailbox_fields, N(mailbox_fields)};

static const sw_field limits_fields[] = {
    {.name = "memory",
     .type = SW_F_SIZE,
     .offset = offsetof(sw_process_lua, limits.memory) - offsetof(sw_process_lua, limits),
     .flags = SW_F_POSITIVE},
    {.name = "reductions",
     .type = SW_F_INT,
     .offset = offsetof(sw_process_lua, limits.reductions) - offsetof(sw_process_lua, limits),
     .min = 100,
     .max = 1e9},
    {.name = "mailbox",
     .type = SW_F_OBJECT,
     .offset = offsetof(sw_process_lua, limits.mailbox) - offsetof(sw_process_lua, limits),
     .sub = &mailbox_schema},
};
static const sw_schema limits_schema = {limits_fields, N(limits_fields)};

static const sw_field process_lua_fields[] = {
    {.name = "source",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_process_lua, source),
     .flags = SW_F_REQUIRED,
     .custom = parse_source},
    {.name = "method", .type = SW_F_STRING, .offset = offsetof(sw_process_lua, method)},
    {.name = "imports",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_process_lua, imports),
     .custom = parse_imports},
    {.name = "limits",
     .type = SW_F_OBJECT,
     .offset = offsetof(sw_process_lua, limits),
     .sub = &limits_schema},
    {.name = "jit", .type = SW_F_BOOL, .offset = offsetof(sw_process_lua, jit)},
};
static const sw_schema process_lua_schema = {process_lua_fields, N(process_lua_fields)};

static const sw_field library_lua_fields[] = {
    {.name = "source",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_library_lua, source),
     .flags = SW_F_REQUIRED,
     .custom = parse_source},
    {.name = "imports",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_library_lua, imports),
     .custom = parse_imports},
};
static const sw_schema library_lua_schema = {library_lua_fields, N(library_lua_fields)};

static const sw_field host_fields[] = {
    {.name = "workers",
     .type = SW_F_INT,
     .offset = offsetof(sw_process_host, workers),
     .min = 1,
     .max = 1024},
};
static const sw_schema host_schema = {host_fields, N(host_fields)};

/* ---- lifecycle ---- */

static const char *const restart_policies[] = {"on_failure", "always", "never", NULL};
static const char *const ready_modes[] = {"spawn", "notify", "health", NULL};
static const char *const strategies[] = {"one_for_one", "one_for_all", "rest_for_one", NULL};

#define RS(f) offsetof(sw_restart, f)
static const sw_field restart_fields[] = {
    {.name = "policy", .type = SW_F_ENUM, .offset = RS(policy), .enums = restart_policies},
    {.name = "initial_delay", .type = SW_F_DURATION, .offset = RS(initial_delay_ns)},
    {.name = "max_delay", .type = SW_F_DURATION, .offset = RS(max_delay_ns)},
    {.name = "backoff_factor",
     .type = SW_F_NUMBER,
     .offset = RS(backoff_factor),
     .min = 1,
     .max = 1000},
    {.name = "jitter", .type = SW_F_NUMBER, .offset = RS(jitter), .min = 0, .max = 1},
    {.name = "max_attempts", .type = SW_F_INT, .offset = RS(max_attempts), .min = 0, .max = 1e9},
};
static const sw_schema restart_schema = {restart_fields, N(restart_fields)};
const sw_schema *const sw_restart_schema = &restart_schema;

#define SC(f) offsetof(sw_security_ctx, f)
static const sw_field actor_fields[] = {
    {.name = "id", .type = SW_F_STRING, .offset = SC(actor_id), .flags = SW_F_REQUIRED},
    {.name = "meta", .type = SW_F_MAP, .offset = SC(actor_meta)},
};
static const sw_schema actor_schema = {actor_fields, N(actor_fields)};

static const sw_field security_fields[] = {
    {.name = "actor", .type = SW_F_OBJECT, .offset = 0, .sub = &actor_schema},
    {.name = "groups", .type = SW_F_REFLIST, .offset = SC(groups), .flags = SW_F_GROUPREF},
    {.name = "policies",
     .type = SW_F_REFLIST,
     .offset = SC(policies),
     .kinds = SW_KINDBIT(SW_KIND_POLICY)},
};
static const sw_schema security_schema = {security_fields, N(security_fields)};

void sw_parse_security(sw_parse *p, const sw_node *n, void *dst)
{
    sw_security_ctx *ctx = dst;
    if (n->type != SW_NODE_MAP) {
        sw_parse_error(p, n, "expected a mapping {actor, groups, policies}, got %s",
                       sw_node_describe(n));
        return;
    }
    ctx->present = true;
    sw_schema_parse(p, &security_schema, n, ctx, NULL);
}

static const sw_field lifecycle_limits_fields[] = {
    {.name = "processes", .type = SW_F_INT, .offset = 0, .min = 1, .max = 1e9},
    {.name = "memory",
     .type = SW_F_SIZE,
     .offset = offsetof(sw_lifecycle, limits.memory) - offsetof(sw_lifecycle, limits),
     .flags = SW_F_POSITIVE},
};
static const sw_schema lifecycle_limits_schema = {lifecycle_limits_fields,
                                                  N(lifecycle_limits_fields)};

#define DEP_KINDS                                                                         \
    (SW_KINDBIT(SW_KIND_SERVICE) | SW_KINDBIT(SW_KIND_GROUP) | SW_KINDBIT(SW_KIND_DATA) | \
     SW_KINDBIT(SW_KIND_PROCESS_LUA) | SW_KINDBIT(SW_KIND_LIBRARY_LUA) |                  \
     SW_KINDBIT(SW_KIND_FUNCTION_LUA) | SW_KINDBIT(SW_KIND_HTTP_SERVICE))
#define HC(f) offsetof(sw_lifecycle, health.f) - offsetof(sw_lifecycle, health)
static const sw_field health_fields[] = {
    {.name = "check",
     .type = SW_F_REF,
     .offset = HC(check),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_FUNCTION_LUA)},
    {.name = "interval", .type = SW_F_DURATION, .offset = HC(interval_ns), .flags = SW_F_POSITIVE},
    {.name = "timeout", .type = SW_F_DURATION, .offset = HC(timeout_ns), .flags = SW_F_POSITIVE},
    {.name = "failures", .type = SW_F_INT, .offset = HC(failures), .min = 1, .max = 1e9},
    {.name = "start_period", .type = SW_F_DURATION, .offset = HC(start_period_ns)},
};
static const sw_schema health_schema = {health_fields, N(health_fields)};

#define LC(f) offsetof(sw_lifecycle, f)
static const sw_field lifecycle_fields[] = {
    {.name = "auto_start", .type = SW_F_BOOL, .offset = LC(auto_start)},
    {.name = "start_timeout", .type = SW_F_DURATION, .offset = LC(start_timeout_ns)},
    {.name = "stop_timeout",
     .type = SW_F_DURATION,
     .offset = LC(stop_timeout_ns),
     .flags = SW_F_INFINITE},
    {.name = "stable_threshold", .type = SW_F_DURATION, .offset = LC(stable_threshold_ns)},
    {.name = "ready", .type = SW_F_ENUM, .offset = LC(ready), .enums = ready_modes},
    {.name = "depends_on", .type = SW_F_REFLIST, .offset = LC(depends_on), .kinds = DEP_KINDS},
    {.name = "requires", .type = SW_F_REFLIST, .offset = LC(depends_on), .kinds = DEP_KINDS},
    {.name = "restart", .type = SW_F_OBJECT, .offset = LC(restart), .sub = &restart_schema},
    {.name = "security", .type = SW_F_CUSTOM, .offset = LC(security), .custom = sw_parse_security},
    {.name = "limits", .type = SW_F_OBJECT, .offset = LC(limits), .sub = &lifecycle_limits_schema},
    {.name = "validate",
     .type = SW_F_REF,
     .offset = LC(validate),
     .kinds = SW_KINDBIT(SW_KIND_PROCESS_LUA)},
    {.name = "watchdog", .type = SW_F_DURATION, .offset = LC(watchdog_ns)},
    {.name = "health", .type = SW_F_OBJECT, .offset = LC(health), .sub = &health_schema},
};
const sw_schema sw_lifecycle_schema = {lifecycle_fields, N(lifecycle_fields)};

void sw_lifecycle_defaults(sw_lifecycle *lc)
{
    lc->auto_start = false;
    lc->start_timeout_ns = 10 * SW_NS_PER_S;
    lc->stop_timeout_ns = 10 * SW_NS_PER_S;
    lc->stable_threshold_ns = 5 * SW_NS_PER_S;
    lc->ready = SW_READY_SPAWN;
    lc->restart.policy = SW_RESTART_ON_FAILURE;
    lc->restart.initial_delay_ns = 1 * SW_NS_PER_S;
    lc->restart.max_delay_ns = 90 * SW_NS_PER_S;
    lc->restart.backoff_factor = 2.0;
    lc->restart.jitter = 0.1;
    lc->restart.max_attempts = 0;
    lc->health.interval_ns = 10 * SW_NS_PER_S;
    lc->health.timeout_ns = 2 * SW_NS_PER_S;
    lc->health.failures = 3;
}

/* ---- process.service / service.group ---- */

#define SV(f) offsetof(sw_service, f)
static const sw_field service_fields[] = {
    {.name = "process",
     .type = SW_F_REF,
     .offset = SV(process),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_PROCESS_LUA)},
    {.name = "host",
     .type = SW_F_REF,
     .offset = SV(host),
     .kinds = SW_KINDBIT(SW_KIND_PROCESS_HOST)},
    {.name = "input", .type = SW_F_LIST, .offset = SV(input)},
    {.name = "config", .type = SW_F_ANY, .offset = SV(config)},
    {.name = "lifecycle",
     .type = SW_F_OBJECT,
     .offset = SV(lifecycle),
     .sub = &sw_lifecycle_schema},
};
static const sw_schema service_schema = {service_fields, N(service_fields)};

#define GR(f) offsetof(sw_group, f)
static const sw_field group_fields[] = {
    {.name = "strategy", .type = SW_F_ENUM, .offset = GR(strategy), .enums = strategies},
    {.name = "intensity", .type = SW_F_INT, .offset = GR(intensity), .min = 0, .max = 1e9},
    {.name = "period", .type = SW_F_DURATION, .offset = GR(period_ns), .flags = SW_F_POSITIVE},
    {.name = "children",
     .type = SW_F_REFLIST,
     .offset = GR(children),
     .flags = SW_F_REQUIRED | SW_F_NONEMPTY,
     .kinds = SW_KINDBIT(SW_KIND_SERVICE) | SW_KINDBIT(SW_KIND_GROUP) |
              SW_KINDBIT(SW_KIND_HTTP_SERVICE)},
    {.name = "lifecycle",
     .type = SW_F_OBJECT,
     .offset = GR(lifecycle),
     .sub = &sw_lifecycle_schema},
};
static const sw_schema group_schema = {group_fields, N(group_fields)};

static void service_defaults(sw_entry *e) { sw_lifecycle_defaults(&e->as.service.lifecycle); }
static void group_defaults(sw_entry *e)
{
    e->as.group.strategy = SW_ONE_FOR_ONE;
    e->as.group.intensity = 3;
    e->as.group.period_ns = 5 * SW_NS_PER_S;
    sw_lifecycle_defaults(&e->as.group.lifecycle);
}

/* ---- fs.volume ---- */

/* path: absolute, or relative to the app directory (joined to its real path, so the host's
 * working directory never matters). The directory itself is opened when Lua uses it. */
static void parse_volume_path(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    if (!*s) {
        sw_parse_error(p, n, "empty path");
        return;
    }
    if (s[0] == '/' || !p->app_root) *(const char **)dst = s;
    else *(const char **)dst = sw_arena_printf(p->arena, "%s/%s", p->app_root, s);
}

#define FV(f) offsetof(sw_fs_volume, f)
static const sw_field volume_fields[] = {
    {.name = "path",
     .type = SW_F_CUSTOM,
     .offset = FV(path),
     .flags = SW_F_REQUIRED,
     .custom = parse_volume_path},
    {.name = "readonly", .type = SW_F_BOOL, .offset = FV(readonly)},
};
static const sw_schema volume_schema = {volume_fields, N(volume_fields)};

/* ---- security.token_store ---- */

#define TS(f) offsetof(sw_token_store_def, f)
static const sw_field token_store_fields[] = {
    {.name = "ttl", .type = SW_F_DURATION, .offset = TS(ttl_ns), .flags = SW_F_POSITIVE},
    {.name = "max_tokens", .type = SW_F_INT, .offset = TS(max_tokens), .min = 1, .max = 1e8},
};
static const sw_schema token_store_schema = {token_store_fields, N(token_store_fields)};

static void token_store_defaults(sw_entry *e)
{
    e->as.token_store.ttl_ns = 3600 * SW_NS_PER_S;
    e->as.token_store.max_tokens = 100000;
}

static const sw_kind_def kinds[] = {
    {"process.lua", SW_KIND_PROCESS_LUA, &process_lua_schema, NULL},
    {"library.lua", SW_KIND_LIBRARY_LUA, &library_lua_schema, NULL},
    {"process.host", SW_KIND_PROCESS_HOST, &host_schema, NULL},
    {"process.service", SW_KIND_SERVICE, &service_schema, service_defaults},
    {"service.group", SW_KIND_GROUP, &group_schema, group_defaults},
    {"security.policy", SW_KIND_POLICY, &sw_policy_entry_schema, NULL},
    {"registry.entry", SW_KIND_DATA, NULL, NULL},
    /* a function run in a fresh process per call (funcs): a process.lua's fields and struct */
    {"function.lua", SW_KIND_FUNCTION_LUA, &process_lua_schema, NULL},
    {"env.variables", SW_KIND_ENV_VARIABLES, &sw_env_variables_schema, NULL},
    {"fs.volume", SW_KIND_FS_VOLUME, &volume_schema, NULL},
    /* the HTTP server (kinds_http.c) */
    {"http.service", SW_KIND_HTTP_SERVICE, &sw_http_service_schema, sw_http_service_defaults},
    {"http.router", SW_KIND_HTTP_ROUTER, &sw_http_router_schema, sw_http_router_defaults},
    {"http.endpoint", SW_KIND_HTTP_ENDPOINT, &sw_http_endpoint_schema, NULL},
    {"security.token_store", SW_KIND_TOKEN_STORE, &token_store_schema, token_store_defaults},
};

const char *const sw_kind_names[] = {
    "process.lua",     "library.lua",    "process.host",  "process.service",      "service.group",
    "security.policy", "registry.entry", "function.lua",  "env.variables",        "fs.volume",
    "http.service",    "http.router",    "http.endpoint", "security.token_store", NULL};

const sw_kind_def *sw_kind_defs(size_t *n)
{
    *n = N(kinds);
    return kinds;
}

const sw_kind_def *sw_kind_lookup(const char *name)
{
    for (size_t i = 0; i < N(kinds); i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    return NULL;
}

const char *sw_kind_name(sw_kind k) { return k < SW_KIND__COUNT ? sw_kind_names[k] : "?"; }

int sw_kind_from_name(const char *name)
{
    const sw_kind_def *d = sw_kind_lookup(name);
    return d ? (int)d->kind : -1;
}

void sw_kind_parse(sw_parse *p, const sw_kind_def *def, sw_entry *e)
{
    if (def->defaults) def->defaults(e);
    if (def->schema) sw_schema_parse(p, def->schema, e->node, &e->as, entry_keys);
}
