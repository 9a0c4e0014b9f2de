/* The HTTP server's kinds (docs/registry.md "http.service"): http.service (a service whose
 * process is the host's server; its lifecycle is any service's), http.router (a prefix, the
 * identity of its handlers, its requests' auth) and http.endpoint (method, path pattern,
 * function, auth). Paths, listen addresses and auth headers are checked here, so a mistake is
 * reported with its place at load. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "units.h"

#define N(a) (sizeof(a) / sizeof *(a))

/* ---- readers ---- */

/* "HOST:PORT" or "tcp://HOST:PORT": HOST a name or address ("[::1]" for IPv6), PORT 0-65535.
 * The address itself is resolved when the server starts. */
static void parse_listen(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    const char *addr = strncmp(s, "tcp://", 6) == 0 ? s + 6 : s;
    const char *colon = strrchr(addr, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == addr || !colon[1] || *end || port < 0 || port > 65535) {
        sw_parse_error(p, n, "expected HOST:PORT (\"127.0.0.1:8080\", \"[::1]:0\"), got \"%s\"", s);
        return;
    }
    *(const char **)dst = s;
}

static const char *const methods[] = {"GET",    "HEAD",  "POST",    "PUT",
                                      "DELETE", "PATCH", "OPTIONS", NULL};

static void parse_method(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    char up[16];
    size_t len = strlen(s);
    for (size_t i = 0; i < len && i < sizeof up - 1; i++)
        up[i] = (char)toupper((unsigned char)s[i]);
    up[len < sizeof up - 1 ? len : sizeof up - 1] = 0;
    for (const char *const *m = methods; *m; m++) {
        if (len < sizeof up && strcmp(*m, up) == 0) {
            *(const char **)dst = *m;
            return;
        }
    }
    sw_parse_error(p, n,
                   "unknown method \"%s\" (expected GET, HEAD, POST, PUT, DELETE, PATCH or "
                   "OPTIONS)",
                   s);
}

static bool param_name(const char *s, size_t len)
{
    if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

/* One segment of a path (without its '/'): NULL if fine, else what is wrong. */
static const char *segment_problem(const char *seg, size_t len, bool last, bool params)
{
    const char *open = memchr(seg, '{', len), *close = memchr(seg, '}', len);
    if (!open && !close) return NULL;
    if (!params) return "a router prefix takes no {parameters}";
    if (open != seg || !close || close != seg + len - 1)
        return "a {parameter} must be a whole segment (\"/items/{id}\")";
    size_t inner = len - 2;
    bool rest = inner > 3 && memcmp(seg + 1 + inner - 3, "...", 3) == 0;
    if (!param_name(seg + 1, rest ? inner - 3 : inner))
        return "a parameter name must be a Lua identifier";
    if (rest && !last) return "{name...} must be the last segment";
    return NULL;
}

static bool check_path(sw_parse *p, const sw_node *n, const char *s, bool params)
{
    if (s[0] != '/') {
        sw_parse_error(p, n, "a path must start with \"/\", got \"%s\"", s);
        return false;
    }
    for (const char *seg = s + 1;;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        const char *why = segment_problem(seg, len, !slash, params);
        if (why) {
            sw_parse_error(p, n, "%s, got \"%s\"", why, s);
            return false;
        }
        if (!slash) return true;
        seg = slash + 1;
    }
}

static void parse_path(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (sw_read_string(p, n, &s) && check_path(p, n, s, true)) *(const char **)dst = s;
}

/* A router's prefix: "/" or "/api" (a trailing slash is dropped). */
static void parse_prefix(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s) || !check_path(p, n, s, false)) return;
    size_t len = strlen(s);
    while (len > 1 && s[len - 1] == '/') len--;
    *(const char **)dst = sw_arena_strndup(p->arena, s, len);
}

/* An HTTP token (RFC 9110 "tchar"): what a header name and an auth scheme are made of. */
static bool http_token(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s)) return false;
    return true;
}

static void parse_header_name(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    if (!*s || !http_token(s)) sw_parse_error(p, n, "not a header name: \"%s\"", s);
    else *(const char **)dst = s;
}

static void parse_scheme(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    if (!http_token(s))
        sw_parse_error(p, n, "not an auth scheme: \"%s\" (\"Bearer\", or \"\" for a raw token)", s);
    else *(const char **)dst = s;
}

/* ---- auth (http.router and http.endpoint) ---- */

#define HA(f) offsetof(sw_http_auth, f)
static const sw_field http_auth_fields[] = {
    {.name = "token_store",
     .type = SW_F_REF,
     .offset = HA(token_store),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_TOKEN_STORE)},
    {.name = "header", .type = SW_F_CUSTOM, .offset = HA(header), .custom = parse_header_name},
    {.name = "scheme", .type = SW_F_CUSTOM, .offset = HA(scheme), .custom = parse_scheme},
    {.name = "required", .type = SW_F_BOOL, .offset = HA(required)},
};
static const sw_schema http_auth_schema = {http_auth_fields, N(http_auth_fields)};

/* `auth`: its defaults, then the fields written; `present` tells an endpoint's from none. */
static void parse_auth(sw_parse *p, const sw_node *n, void *dst)
{
    if (n->type != SW_NODE_MAP) {
        sw_parse_error(p, n, "expected a mapping ({token_store: ID}), got %s", sw_node_describe(n));
        return;
    }
    sw_http_auth *a = dst;
    *a = (sw_http_auth){
        .present = true, .header = "Authorization", .scheme = "Bearer", .required = true};
    sw_schema_parse(p, &http_auth_schema, n, a, NULL);
}

/* ---- http.service ---- */

#define HL(f) offsetof(sw_http_service, limits.f) - offsetof(sw_http_service, limits)
static const sw_field http_limits_fields[] = {
    {.name = "max_connections",
     .type = SW_F_INT,
     .offset = HL(max_connections),
     .min = 1,
     .max = 1000000},
    {.name = "header_timeout",
     .type = SW_F_DURATION,
     .offset = HL(header_timeout_ns),
     .flags = SW_F_POSITIVE},
    {.name = "idle_timeout",
     .type = SW_F_DURATION,
     .offset = HL(idle_timeout_ns),
     .flags = SW_F_POSITIVE},
    {.name = "max_header_size",
     .type = SW_F_SIZE,
     .offset = HL(max_header_size),
     .flags = SW_F_POSITIVE},
    {.name = "max_body_size",
     .type = SW_F_SIZE,
     .offset = HL(max_body_size),
     .flags = SW_F_POSITIVE},
};
static const sw_schema http_limits_schema = {http_limits_fields, N(http_limits_fields)};

static const sw_field http_service_fields[] = {
    {.name = "listen",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_service, listen),
     .flags = SW_F_REQUIRED,
     .custom = parse_listen},
    {.name = "limits",
     .type = SW_F_OBJECT,
     .offset = offsetof(sw_http_service, limits),
     .sub = &http_limits_schema},
    {.name = "lifecycle",
     .type = SW_F_OBJECT,
     .offset = offsetof(sw_http_service, service.lifecycle),
     .sub = &sw_lifecycle_schema},
};
const sw_schema sw_http_service_schema = {http_service_fields, N(http_service_fields)};

void sw_http_service_defaults(sw_entry *e)
{
    sw_http_service *h = &e->as.http_service;
    sw_lifecycle_defaults(&h->service.lifecycle);
    h->limits.max_connections = 1024;
    h->limits.header_timeout_ns = 10 * SW_NS_PER_S;
    h->limits.idle_timeout_ns = 60 * SW_NS_PER_S;
    h->limits.max_header_size = 16 * 1024;
    h->limits.max_body_size = 1024 * 1024;
}

/* ---- http.router ---- */

static const sw_field router_lifecycle_fields[] = {
    {.name = "security", .type = SW_F_CUSTOM, .offset = 0, .custom = sw_parse_security},
};
static const sw_schema router_lifecycle_schema = {router_lifecycle_fields,
                                                  N(router_lifecycle_fields)};

static const sw_field http_router_fields[] = {
    {.name = "server",
     .type = SW_F_REF,
     .offset = offsetof(sw_http_router, server),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_HTTP_SERVICE)},
    {.name = "prefix",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_router, prefix),
     .custom = parse_prefix},
    {.name = "lifecycle",
     .type = SW_F_OBJECT,
     .offset = offsetof(sw_http_router, lifecycle),
     .sub = &router_lifecycle_schema},
    {.name = "auth",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_router, auth),
     .sub = &http_auth_schema,
     .custom = parse_auth},
};
const sw_schema sw_http_router_schema = {http_router_fields, N(http_router_fields)};

void sw_http_router_defaults(sw_entry *e) { e->as.http_router.prefix = "/"; }

/* ---- http.endpoint ---- */

static const sw_field http_endpoint_fields[] = {
    {.name = "router",
     .type = SW_F_REF,
     .offset = offsetof(sw_http_endpoint, router),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_HTTP_ROUTER)},
    {.name = "method",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_endpoint, method),
     .flags = SW_F_REQUIRED,
     .custom = parse_method},
    {.name = "path",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_endpoint, path),
     .flags = SW_F_REQUIRED,
     .custom = parse_path},
    {.name = "func",
     .type = SW_F_REF,
     .offset = offsetof(sw_http_endpoint, func),
     .flags = SW_F_REQUIRED,
     .kinds = SW_KINDBIT(SW_KIND_FUNCTION_LUA)},
    {.name = "auth",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_http_endpoint, auth),
     .sub = &http_auth_schema,
     .custom = parse_auth},
};
const sw_schema sw_http_endpoint_schema = {http_endpoint_fields, N(http_endpoint_fields)};
