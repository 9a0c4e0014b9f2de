/* The entry model: one typed struct per kind, filled from YAML with every default applied.
 * Entries live in a snapshot's arena and never change after loading (a reload builds a new
 * snapshot). References are resolved: `target` points at the entry named. */
#ifndef STEWARD_ENTRY_H
#define STEWARD_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yaml_tree.h"

typedef enum sw_kind {
    SW_KIND_PROCESS_LUA,
    SW_KIND_LIBRARY_LUA,
    SW_KIND_PROCESS_HOST,
    SW_KIND_SERVICE,
    SW_KIND_GROUP,
    SW_KIND_POLICY,
    SW_KIND_DATA,         /* registry.entry */
    SW_KIND_FUNCTION_LUA, /* parsed into as.process_lua: the same fields */
    SW_KIND_ENV_VARIABLES,
    SW_KIND_FS_VOLUME,
    SW_KIND_HTTP_SERVICE, /* a service (as.service aliases as.http_service.service) */
    SW_KIND_HTTP_ROUTER,
    SW_KIND_HTTP_ENDPOINT,
    SW_KIND_TOKEN_STORE, /* security.token_store */
    SW_KIND_TEST_LUA,    /* parsed into as.test_lua, whose first member is a process.lua's */
    SW_KIND__COUNT
} sw_kind;

#define SW_KINDBIT(k) (1u << (k))

typedef struct sw_entry sw_entry;

typedef struct sw_ref {
    const char *id;         /* fully qualified ns:name */
    const sw_node *node;    /* where it was written */
    const sw_entry *target; /* resolved; NULL only for group names (see sw_security_ctx) */
} sw_ref;

typedef struct sw_reflist {
    size_t n;
    sw_ref *v;
} sw_reflist;

typedef struct sw_lib_tree sw_lib_tree;

typedef struct sw_source {
    const char *path; /* resolved file for file://, NULL for inline code */
    const char *text; /* the code; NULL for a dir:// tree without a root module */
    size_t len;
    const char *shipped;     /* the host's own entries only: lua/<shipped>.lua runs instead */
    const sw_lib_tree *tree; /* dir:// (library.lua only): the tree; path/text its root module */
} sw_source;

/* One Lua file of a dir:// tree, read at load. */
typedef struct sw_tree_file {
    const char *rel;  /* path inside the tree: "List.lua", "a/b/init.lua" */
    const char *path; /* the file as the chunk name shows it */
    const char *text;
    size_t len;
} sw_tree_file;

/* A library.lua's module tree (docs/registry.md "Module trees"): every *.lua file under the
 * directory, sorted by rel. */
struct sw_lib_tree {
    const char *dir;  /* the directory, as the chunk names show it */
    const char *name; /* the directory's last component: the name its files require it by */
    size_t n;
    sw_tree_file *files;
};

typedef struct sw_import {
    const char *alias;
    sw_ref library;
} sw_import;

typedef struct sw_imports {
    size_t n;
    sw_import *v;
} sw_imports;

typedef struct sw_process_lua {
    sw_source source;
    const char *method; /* NULL: the returned function, or main of a returned table */
    sw_imports imports;
    struct {
        uint64_t memory; /* bytes; 0 = unlimited (an explicit 0 is refused at load) */
        int64_t
            reductions; /* instructions per slice by count hook; 0 (default): 2 ms time slices */
        struct {
            int64_t
                messages;   /* queued messages; 0: the host's default (an explicit 0 is refused) */
            uint64_t bytes; /* queued bytes; 0: the host's default (an explicit 0 is refused) */
        } mailbox;
    } limits;
    bool jit;
} sw_process_lua;

typedef struct sw_library_lua {
    sw_source source;
    sw_imports imports;
    const char *module; /* the name its own files require it by; NULL: the tree's name */
} sw_library_lua;

typedef struct sw_process_host {
    int64_t workers; /* 0 = number of cores */
} sw_process_host;

typedef enum { SW_RESTART_ON_FAILURE, SW_RESTART_ALWAYS, SW_RESTART_NEVER } sw_restart_policy;
typedef enum { SW_READY_SPAWN, SW_READY_NOTIFY, SW_READY_HEALTH } sw_ready_mode;
typedef enum { SW_ONE_FOR_ONE, SW_ONE_FOR_ALL, SW_REST_FOR_ONE } sw_strategy;

typedef struct sw_restart {
    int policy; /* sw_restart_policy */
    int64_t initial_delay_ns, max_delay_ns;
    double backoff_factor, jitter;
    int64_t max_attempts; /* 0 = unlimited */
} sw_restart;

typedef struct sw_security_ctx {
    bool present;
    const char *actor_id;      /* NULL: no actor */
    const sw_node *actor_meta; /* a mapping, or NULL */
    sw_reflist groups;         /* qualified group names (target NULL: groups are not entries) */
    sw_reflist policies;
} sw_security_ctx;

typedef struct sw_lifecycle {
    bool auto_start;
    struct {
        int64_t processes; /* live processes its processes spawned, at any depth; 0: not set
                                    (a group's, else the host's default) */
        uint64_t memory;   /* bytes the Lua heaps of its own process and its tree may hold
                              together; 0: not set (a group's, else none) */
    } limits;
    int64_t start_timeout_ns, stop_timeout_ns, stable_threshold_ns;
    int ready;             /* sw_ready_mode */
    sw_reflist depends_on; /* `requires` is an alias */
    sw_restart restart;
    sw_security_ctx security;
    sw_ref validate;     /* a process.lua run with (new_config, old_config) before a reload
                          applies a change of the service; id NULL: none */
    int64_t watchdog_ns; /* service.alive() at least this often once running; 0: no watchdog */
    struct {             /* docs/supervision.md "Health checks" */
        sw_ref check;    /* a function.lua run with the service's config; id NULL: none */
        int64_t interval_ns, timeout_ns, start_period_ns;
        int64_t failures; /* consecutive failed checks that restart the service */
    } health;
} sw_lifecycle;

typedef struct sw_service {
    sw_ref process;        /* a process.lua */
    sw_ref host;           /* a process.host; id NULL: the default host */
    const sw_node *input;  /* a list, or NULL */
    const sw_node *config; /* any YAML, or NULL */
    sw_lifecycle lifecycle;
} sw_service;

typedef struct sw_group {
    int strategy; /* sw_strategy */
    int64_t intensity;
    int64_t period_ns;
    sw_reflist children; /* services and groups, in start order */
    sw_lifecycle lifecycle;
} sw_group;

typedef enum { SW_EFFECT_ALLOW, SW_EFFECT_DENY } sw_effect;
typedef enum {
    SW_FIELD_ACTOR_ID,
    SW_FIELD_ACTOR_META,
    SW_FIELD_ACTION,
    SW_FIELD_RESOURCE,
    SW_FIELD_META
} sw_field_root;
typedef enum {
    SW_OP_EQ,
    SW_OP_NE,
    SW_OP_LT,
    SW_OP_GT,
    SW_OP_LTE,
    SW_OP_GTE,
    SW_OP_IN,
    SW_OP_NIN,
    SW_OP_EXISTS,
    SW_OP_NEXISTS,
    SW_OP_CONTAINS,
    SW_OP_NCONTAINS,
    SW_OP_MATCHES,
    SW_OP_NMATCHES
} sw_operator;

typedef struct sw_field_path {
    const char *text; /* as written: actor.meta.org.plan */
    int root;         /* sw_field_root */
    size_t n;         /* path segments after the root (meta paths only) */
    const char **segs;
} sw_field_path;

typedef struct sw_condition {
    sw_field_path field;
    int op;               /* sw_operator */
    const sw_node *value; /* NULL when value_from is used (or exists without a value) */
    bool has_value_from;
    sw_field_path value_from;
} sw_condition;

typedef struct sw_strlist {
    size_t n;
    const char **v;
} sw_strlist;

typedef struct sw_env_default {
    const char *name, *value;
    const sw_node *node; /* its key, where it was written */
} sw_env_default;

/* env.variables: defaults, and the host variables env.get may read (env_vars.h). */
typedef struct sw_env_variables {
    size_t n_vars;
    sw_env_default *vars;
    sw_strlist from_process;
} sw_env_variables;

typedef struct sw_policy {
    sw_strlist actions; /* patterns: "*", a literal, or a literal prefix ending in "*" */
    sw_strlist resources;
    int effect; /* sw_effect */
    size_t n_conditions;
    sw_condition *conditions;
    sw_strlist groups; /* qualified ns:g */
} sw_policy;

/* A directory Lua code may reach with the fs module (docs/registry.md "fs.volume"). */
typedef struct sw_fs_volume {
    const char *path; /* absolute: as written, or joined to the app directory's real path */
    bool readonly;
} sw_fs_volume;
/* security.token_store (docs/registry.md): where tokens of run-time identities live. */
typedef struct sw_token_store_def {
    int64_t ttl_ns;     /* a token's life unless its create says otherwise; default 1h */
    int64_t max_tokens; /* live tokens at most; default 100,000 */
} sw_token_store_def;

/* http.service: a supervised service whose process is the host's HTTP server (docs/registry.md). */
typedef struct sw_http_service {
    sw_service service; /* first, so as.service reads it as any service; process is unset */
    const char *listen; /* "HOST:PORT" */
    struct {
        int64_t max_connections;
        int64_t header_timeout_ns, idle_timeout_ns;
        uint64_t max_header_size, max_body_size;
    } limits;
} sw_http_service;

/* The `auth` of an http.router or http.endpoint (docs/registry.md "auth of routers and
 * endpoints"): requests carry a token of a security.token_store, checked before any handler
 * runs. */
typedef struct sw_http_auth {
    bool present;       /* written: the rest is set */
    sw_ref token_store; /* a security.token_store */
    const char *header; /* "Authorization" */
    const char *scheme; /* "Bearer"; "": the header's whole value is the token */
    bool required;      /* false: a request without a token runs as the router */
} sw_http_auth;

typedef struct sw_http_router {
    sw_ref server;      /* an http.service */
    const char *prefix; /* "/" or "/api": no trailing slash but for "/" */
    struct {
        sw_security_ctx security; /* the identity its handlers run with */
    } lifecycle;
    sw_http_auth auth;
} sw_http_router;

typedef struct sw_http_endpoint {
    sw_ref router;      /* an http.router */
    const char *method; /* upper case: GET, POST, ... */
    const char *path;   /* "/items/{id}", "/static/{path...}" */
    sw_ref func;        /* a function.lua */
    sw_http_auth auth;  /* overrides its router's when present */
} sw_http_endpoint;
/* test.lua: a test file `steward test` runs as a process (docs/registry.md "test.lua"). */
typedef struct sw_test_lua {
    sw_process_lua process; /* first: as.process_lua reads it (source, imports, limits) */
    sw_reflist services;    /* started, with what they need, before the test; stopped after */
    struct {
        sw_security_ctx security; /* the identity the test runs as */
    } lifecycle;
} sw_test_lua;

struct sw_entry {
    const char *id, *ns, *name;
    sw_kind kind;
    const sw_node *node;    /* the entry's mapping as written */
    const sw_node *meta;    /* file meta merged under the entry's own; may be NULL */
    const char *file, *dir; /* the YAML file and its directory */
    unsigned line, col;
    size_t index;           /* position in the snapshot */
    const sw_entry *parent; /* the service.group listing this entry, or NULL */
    union {
        sw_process_lua process_lua; /* process.lua and function.lua */
        sw_library_lua library_lua;
        sw_process_host host;
        sw_service service;
        sw_group group;
        sw_policy policy;
        sw_env_variables env_variables;
        sw_fs_volume fs_volume;
        sw_http_service http_service;
        sw_http_router http_router;
        sw_http_endpoint http_endpoint;
        sw_token_store_def token_store;
        sw_test_lua test_lua;
    } as;
};

/* A supervised service: a process.service, or an http.service (whose as.service is one). */
static inline bool sw_entry_is_service(const sw_entry *e)
{
    return e->kind == SW_KIND_SERVICE || e->kind == SW_KIND_HTTP_SERVICE;
}

const char *sw_kind_name(sw_kind k);
/* The entry's Lua source (process.lua, function.lua, library.lua), or NULL for kinds without
 * one. */
const sw_source *sw_entry_source(const sw_entry *e);
/* The chunk name its source is compiled under: "@path" for a file, "=ID" for inline code. */
void sw_entry_chunkname(const sw_entry *e, char *buf, size_t size);
/* The file of a tree whose module is `sub` (dotted, relative to the tree: "a.b" finds a/b.lua,
 * else a/b/init.lua), or NULL. */
const sw_tree_file *sw_lib_tree_find(const sw_lib_tree *t, const char *sub);
/* -1 if unknown. */
int sw_kind_from_name(const char *name);

#endif
