/* Unit tests for authenticated endpoints (registry/kinds_http.c `auth`, runtime/http_auth.c):
 * auth's defaults, an endpoint's auth replacing its router's, the token found in its header
 * (scheme in any case, blanks around it, a raw token in another header), what a missing, empty,
 * foreign-scheme or unknown token gives under required true and false, and the challenge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http_auth.h"
#include "http_routes.h"
#include "registry.h"
#include "registry_helpers.h"
#include "security_token.h"

static const char *const app =
    "namespace: app\n"
    "entries:\n"
    "  - { name: web, kind: http.service, listen: \"127.0.0.1:0\" }\n"
    "  - { name: f, kind: function.lua, source: \"return function() end\" }\n"
    "  - { name: tokens, kind: security.token_store }\n"
    "  - { name: api, kind: http.router, server: web, prefix: /api, auth: { token_store: tokens "
    "} }\n"
    "  - { name: open, kind: http.router, server: web, prefix: /open }\n"
    "  - { name: strict, kind: http.endpoint, router: api, method: GET, path: /s, func: f }\n"
    "  - { name: loose, kind: http.endpoint, router: api, method: GET, path: /l, func: f,\n"
    "      auth: { token_store: tokens, required: false } }\n"
    "  - { name: plain, kind: http.endpoint, router: open, method: GET, path: /p, func: f }\n"
    "  - { name: keyed, kind: http.endpoint, router: open, method: GET, path: /k, func: f,\n"
    "      auth: { token_store: tokens, header: X-Api-Key, scheme: \"\" } }\n";

typedef struct fixture {
    sw_registry *r;
    sw_hroutes routes;
    sw_token_stores *all;
    sw_sec_identity *alice;
    char token[SW_TOKEN_LEN + 1];
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.r = t_must_load(app);
    assert_int_equal(sw_hroutes_build(&f.routes, f.r, t_get(f.r, "app:web")), 0);
    f.all = sw_token_stores_new();
    sw_token_store *ts = sw_token_store_of(f.all, t_get(f.r, "app:tokens"));
    for (size_t i = 0; i < f.routes.n; i++)
        if (f.routes.v[i].auth) f.routes.v[i].store = ts;
    char err[128];
    sw_security_set *set = sw_security_compile(f.r, err, sizeof err);
    sw_sec_actor *a = sw_sec_actor_new("user:alice", 10);
    sw_sec_scope *s = sw_sec_scope_new(set, NULL, 0, err, sizeof err);
    assert_non_null(s);
    f.alice = sw_sec_identity_new(a, s);
    sw_sec_actor_release(a);
    sw_sec_scope_release(s);
    sw_security_release(set);
    assert_int_equal(sw_token_create(ts, f.alice, 0, f.token, err, sizeof err), 0);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sw_sec_identity_release(f->alice);
    sw_token_stores_free(f->all);
    sw_hroutes_free(&f->routes);
    sw_registry_free(f->r);
    return 0;
}

static const sw_hroute *route_of(fixture *f, const char *endpoint)
{
    for (size_t i = 0; i < f->routes.n; i++)
        if (strcmp(f->routes.v[i].endpoint->id, endpoint) == 0) return &f->routes.v[i];
    fail_msg("no route %s", endpoint);
    return NULL;
}

static void resolved(void **state)
{
    fixture *f = *state;
    const sw_http_auth *a = route_of(f, "app:strict")->auth;
    assert_non_null(a);
    assert_ptr_equal(a, &t_get(f->r, "app:api")->as.http_router.auth); /* the router's */
    assert_string_equal(a->token_store.id, "app:tokens");
    assert_string_equal(a->header, "Authorization");
    assert_string_equal(a->scheme, "Bearer");
    assert_true(a->required);
    assert_false(route_of(f, "app:loose")->auth->required); /* the endpoint's replaces it */
    assert_null(route_of(f, "app:plain")->auth);
    assert_string_equal(route_of(f, "app:keyed")->auth->header, "X-Api-Key");
    assert_string_equal(route_of(f, "app:keyed")->auth->scheme, "");
    assert_false(t_get(f->r, "app:strict")->as.http_endpoint.auth.present);
}

/* What route `ep` makes of a request with one header name: value (none when name is NULL). */
static sw_hauth check(fixture *f, const char *ep, const char *name, const char *value)
{
    char buf[256];
    if (name) snprintf(buf, sizeof buf, "%s%c%s", name, 0, value); /* "name\0value\0" */
    sw_hsrv_request req = {.method = "GET", .url = "/", .header = buf, .n_headers = name ? 1 : 0};
    sw_sec_identity *id;
    sw_hauth r = sw_http_authenticate(route_of(f, ep), &req, &id);
    if (r == SW_HAUTH_OK) {
        assert_ptr_equal(id, f->alice);
        sw_sec_identity_release(id);
    } else {
        assert_null(id);
    }
    return r;
}

static void tokens(void **state)
{
    fixture *f = *state;
    char v[128];
    snprintf(v, sizeof v, "Bearer %s", f->token);
    assert_int_equal(check(f, "app:strict", "authorization", v), SW_HAUTH_OK);
    snprintf(v, sizeof v, "bEARER \t %s  ", f->token);
    assert_int_equal(check(f, "app:strict", "authorization", v), SW_HAUTH_OK);
    assert_int_equal(check(f, "app:strict", NULL, NULL), SW_HAUTH_MISSING);
    assert_int_equal(check(f, "app:strict", "authorization", "  "), SW_HAUTH_MISSING);
    assert_int_equal(check(f, "app:strict", "x-other", v), SW_HAUTH_MISSING);
    assert_int_equal(check(f, "app:strict", "authorization", f->token), SW_HAUTH_INVALID);
    assert_int_equal(check(f, "app:strict", "authorization", "Bearer"), SW_HAUTH_INVALID);
    assert_int_equal(check(f, "app:strict", "authorization", "Bearer "), SW_HAUTH_INVALID);
    snprintf(v, sizeof v, "Basic %s", f->token);
    assert_int_equal(check(f, "app:strict", "authorization", v), SW_HAUTH_INVALID);
    snprintf(v, sizeof v, "Bearerx %s", f->token);
    assert_int_equal(check(f, "app:strict", "authorization", v), SW_HAUTH_INVALID);
    assert_int_equal(
        check(f, "app:strict", "authorization", "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        SW_HAUTH_INVALID);
    /* required: false: no token runs as the router; a bad one is still refused */
    assert_int_equal(check(f, "app:loose", NULL, NULL), SW_HAUTH_NONE);
    assert_int_equal(check(f, "app:loose", "authorization", "Bearer nope"), SW_HAUTH_INVALID);
    snprintf(v, sizeof v, "Bearer %s", f->token);
    assert_int_equal(check(f, "app:loose", "authorization", v), SW_HAUTH_OK);
    /* no auth: the header means nothing */
    assert_int_equal(check(f, "app:plain", "authorization", v), SW_HAUTH_NONE);
    /* a raw token in its own header */
    assert_int_equal(check(f, "app:keyed", "x-api-key", f->token), SW_HAUTH_OK);
    assert_int_equal(check(f, "app:keyed", "x-api-key", v), SW_HAUTH_INVALID);
    assert_int_equal(check(f, "app:keyed", "authorization", v), SW_HAUTH_MISSING);
}

static void challenge(void **state)
{
    fixture *f = *state;
    char head[128];
    size_t n =
        sw_http_auth_challenge(route_of(f, "app:strict"), SW_HAUTH_MISSING, head, sizeof head);
    assert_string_equal(head, "www-authenticate: Bearer\r\n");
    assert_int_equal(n, strlen(head));
    sw_http_auth_challenge(route_of(f, "app:keyed"), SW_HAUTH_INVALID, head, sizeof head);
    assert_string_equal(head, "www-authenticate: Bearer error=\"invalid_token\"\r\n");
    n = sw_http_auth_challenge(route_of(f, "app:strict"), SW_HAUTH_INVALID, head, 8);
    assert_int_equal(n, 7); /* cut to fit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resolved),
        cmocka_unit_test(tokens),
        cmocka_unit_test(challenge),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
