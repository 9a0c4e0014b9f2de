/* Unit tests for the HTTP kinds and routes (registry/kinds_http.c, runtime/http_routes.c):
 * defaults, prefixes joined to paths, the most literal route winning, {name} and {name...}
 * parameters percent-decoded, HEAD answered by GET, 404 and 405 with the allowed methods, the
 * handlers' identity, and an http.service depending on what its endpoints reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_routes.h"
#include "registry.h"
#include "registry_helpers.h"

static const char *const app =
    "namespace: app\n"
    "entries:\n"
    "  - { name: web, kind: http.service, listen: \"127.0.0.1:0\" }\n"
    "  - { name: other, kind: http.service, listen: \"127.0.0.1:0\",\n"
    "      lifecycle: { depends_on: [db] } }\n"
    "  - { name: db, kind: process.service, process: p }\n"
    "  - { name: p, kind: process.lua, source: \"return function() end\" }\n"
    "  - { name: f, kind: function.lua, source: \"return function() end\" }\n"
    "  - { name: root, kind: http.router, server: web }\n"
    "  - name: api\n"
    "    kind: http.router\n"
    "    server: web\n"
    "    prefix: /api/\n"
    "    lifecycle: { security: { actor: { id: bot } } }\n"
    "  - { name: o, kind: http.router, server: other }\n"
    "  - { name: e1, kind: http.endpoint, router: api, method: get, path: "
    "\"/items/{id}\", func: f }\n"
    "  - { name: e2, kind: http.endpoint, router: api, method: PUT, path: "
    "\"/items/{id}\", func: f }\n"
    "  - { name: e3, kind: http.endpoint, router: api, method: GET, path: "
    "/items/new, func: f }\n"
    "  - { name: e4, kind: http.endpoint, router: root, method: GET, path: "
    "\"/static/{path...}\", func: f }\n"
    "  - { name: e5, kind: http.endpoint, router: root, method: GET, path: "
    "/, func: f }\n"
    "  - { name: e6, kind: http.endpoint, router: api, method: POST, path: "
    "/, func: f }\n"
    "  - { name: e7, kind: http.endpoint, router: o, method: GET, path: "
    "/x, func: f }\n";

typedef struct fixture {
    sw_registry *r;
    sw_hroutes routes;
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.r = t_must_load(app);
    assert_int_equal(sw_hroutes_build(&f.routes, f.r, t_get(f.r, "app:web")), 0);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sw_hroutes_free(&f->routes);
    sw_registry_free(f->r);
    return 0;
}

typedef struct match {
    int status;
    const char *endpoint;
    char params[256];
    size_t params_len;
    char allow[64];
} match;

static match route(fixture *f, const char *method, const char *path)
{
    match m = {0};
    const sw_hroute *rt = NULL;
    m.status = sw_hroutes_match(&f->routes, method, path, strlen(path), &rt, m.params,
                                sizeof m.params, &m.params_len, m.allow, sizeof m.allow);
    m.endpoint = rt ? rt->endpoint->id : NULL;
    return m;
}

static void defaults(void **state)
{
    fixture *f = *state;
    const sw_http_service *web = &t_get(f->r, "app:web")->as.http_service;
    assert_int_equal(web->limits.max_connections, 1024);
    assert_int_equal(web->limits.header_timeout_ns, 10000000000LL);
    assert_int_equal(web->limits.idle_timeout_ns, 60000000000LL);
    assert_int_equal(web->limits.max_header_size, 16 * 1024);
    assert_int_equal(web->limits.max_body_size, 1024 * 1024);
    assert_string_equal(t_get(f->r, "app:root")->as.http_router.prefix, "/");
    assert_string_equal(t_get(f->r, "app:api")->as.http_router.prefix, "/api");
    assert_string_equal(t_get(f->r, "app:e1")->as.http_endpoint.method, "GET");
    assert_int_equal(f->routes.n, 6); /* e7 is another server's */
}

static void matches(void **state)
{
    fixture *f = *state;
    match m = route(f, "GET", "/api/items/a%2Fb");
    assert_int_equal(m.status, 200);
    assert_string_equal(m.endpoint, "app:e1");
    assert_int_equal(m.params_len, sizeof "id\0a/b");
    assert_memory_equal(m.params, "id\0a/b", m.params_len);
    assert_string_equal(route(f, "GET", "/api/items/new").endpoint, "app:e3"); /* literal wins */
    assert_string_equal(route(f, "PUT", "/api/items/new").endpoint, "app:e2");
    assert_string_equal(route(f, "HEAD", "/api/items/1").endpoint, "app:e1");
    m = route(f, "GET", "/static/css/site.css");
    assert_string_equal(m.endpoint, "app:e4");
    assert_memory_equal(m.params, "path\0css/site.css", m.params_len);
    assert_string_equal(route(f, "GET", "/").endpoint, "app:e5");
    assert_string_equal(route(f, "POST", "/api").endpoint, "app:e6");
    const sw_hroute *rt = NULL;
    match unused;
    sw_hroutes_match(&f->routes, "GET", "/api/items/1", 12, &rt, unused.params,
                     sizeof unused.params, &unused.params_len, unused.allow, sizeof unused.allow);
    assert_string_equal(rt->identity, "app:api"); /* the router has lifecycle.security */
    sw_hroutes_match(&f->routes, "GET", "/", 1, &rt, unused.params, sizeof unused.params,
                     &unused.params_len, unused.allow, sizeof unused.allow);
    assert_string_equal(rt->identity, "app:web"); /* it has none: the service's */
}

static void misses(void **state)
{
    fixture *f = *state;
    assert_int_equal(route(f, "GET", "/api/items").status, 404);
    assert_int_equal(route(f, "GET", "/api/items/").status, 404); /* an empty {id} */
    assert_int_equal(route(f, "GET", "/api/items/1/x").status, 404);
    assert_int_equal(route(f, "GET", "/x").status, 404);
    match m = route(f, "DELETE", "/api/items/1");
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, PUT");
    m = route(f, "DELETE", "/api/items/new");
    assert_string_equal(m.allow, "GET, PUT");
}

static void service_reaches_its_endpoints(void **state)
{
    fixture *f = *state;
    const sw_graph *g = &f->r->graph;
    size_t web = sw_graph_index(g, t_get(f->r, "app:web"));
    bool reaches_f = false;
    for (size_t k = g->reach_start[web]; k < g->reach_start[web + 1]; k++)
        reaches_f |= g->reach[k] == t_get(f->r, "app:f");
    assert_true(reaches_f); /* through its routers and endpoints: a reload sees f change */
    size_t other = sw_graph_index(g, t_get(f->r, "app:other"));
    assert_int_equal(g->deps[other + 1] - g->deps[other], 1); /* on db */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(matches),
        cmocka_unit_test(misses),
        cmocka_unit_test(service_reaches_its_endpoints),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
