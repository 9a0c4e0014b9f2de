/* Identities made at run time through their C interface (docs/security.md "Identities at run
 * time"): scopes (policy ids, groups, unknown ids, a reload that removes a policy), the
 * deciding policy the audit names, token stores (create, validate, revoke, expiry, the bound,
 * malformed tokens, many threads at once) and the audit limiter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>

#include "registry_helpers.h"
#include "security.h"
#include "security_audit.h"
#include "security_identity.h"
#include "security_token.h"

#define APP                                                                                    \
    "namespace: t\nentries:\n"                                                                 \
    "  - { name: read, kind: security.policy, groups: [roles], policy: { actions: read, "      \
    "resources: orders, effect: allow } }\n"                                                   \
    "  - { name: admin, kind: security.policy, groups: [roles], policy: { actions: '*', "      \
    "resources: orders, effect: allow, conditions: [ { field: actor.meta.role, operator: eq, " \
    "value: admin } ] } }\n"                                                                   \
    "  - { name: no_drop, kind: security.policy, policy: { actions: drop, resources: '*', "    \
    "effect: deny } }\n"                                                                       \
    "  - { name: tokens, kind: security.token_store, ttl: 1h, max_tokens: 3 }\n"

typedef struct fixture {
    sw_registry *reg;
    sw_security_set *set;
} fixture;

static fixture load(const char *yaml)
{
    fixture f = {t_must_load(yaml), NULL};
    char err[256];
    f.set = sw_security_compile(f.reg, err, sizeof err);
    assert_non_null(f.set);
    return f;
}

static void unload(fixture *f)
{
    sw_security_release(f->set);
    sw_registry_free(f->reg);
}

/* An actor with meta {role = role}, built as the Lua binding builds it. */
static sw_sec_actor *actor(const char *id, const char *role)
{
    sw_sec_actor *a = sw_sec_actor_new(id, strlen(id));
    sw_node *m = sw_arena_alloc(&a->arena, sizeof *m), *k = sw_arena_alloc(&a->arena, sizeof *k),
            *v = sw_arena_alloc(&a->arena, sizeof *v);
    *k = (sw_node){.type = SW_NODE_SCALAR, .scalar = SW_SCALAR_STRING, .str = "role", .len = 4};
    *v = (sw_node){
        .type = SW_NODE_SCALAR, .scalar = SW_SCALAR_STRING, .str = role, .len = strlen(role)};
    *m = (sw_node){
        .type = SW_NODE_MAP, .n = 1, .kids = sw_arena_alloc(&a->arena, 2 * sizeof(sw_node *))};
    m->kids[0] = k, m->kids[1] = v;
    a->meta = m;
    return a;
}

static sw_sec_decision decide(const sw_sec_scope *s, const sw_sec_actor *a, const char *action,
                              const sw_entry **decider)
{
    return sw_sec_scope_decide(s, a, action, strlen(action), "orders", 6, NULL, decider);
}

static void test_scopes(void **state)
{
    (void)state;
    fixture f = load(APP);
    char err[128];
    const char *ids[] = {"t:read", "t:no_drop", "t:read"};
    sw_sec_scope *s = sw_sec_scope_new(f.set, ids, 3, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(s->n, 2); /* duplicates once */
    sw_sec_actor *bob = actor("user:bob", "user"), *alice = actor("user:alice", "admin");
    const sw_entry *why;
    assert_int_equal(decide(s, bob, "read", &why), SW_SEC_ALLOW);
    assert_string_equal(why->id, "t:read");
    assert_int_equal(decide(s, bob, "drop", &why), SW_SEC_DENY);
    assert_string_equal(why->id, "t:no_drop");
    assert_int_equal(decide(s, bob, "write", &why), SW_SEC_UNDEFINED);
    assert_null(why);

    const char *bad[] = {"t:read", "t:nope"};
    assert_null(sw_sec_scope_new(f.set, bad, 2, err, sizeof err));
    assert_string_equal(err, "unknown policy t:nope");

    sw_sec_scope *g = sw_sec_scope_group(f.set, "t:roles", err, sizeof err);
    assert_non_null(g);
    assert_int_equal(g->n, 2);
    assert_string_equal(g->group, "t:roles");
    assert_int_equal(decide(g, alice, "write", NULL), SW_SEC_ALLOW);
    assert_int_equal(decide(g, bob, "write", NULL), SW_SEC_UNDEFINED);
    assert_null(sw_sec_scope_group(f.set, "t:none", err, sizeof err));
    assert_string_equal(err, "no policy joins group t:none");

    /* the same set: the scope itself; a set without t:no_drop: a broken scope that denies */
    sw_sec_scope *same = sw_sec_scope_bind(s, f.set);
    assert_ptr_equal(same, s);
    fixture f2 = load("namespace: t\nentries:\n"
                      "  - { name: read, kind: security.policy, policy: { actions: read, "
                      "resources: orders, effect: allow } }\n");
    sw_sec_scope *b = sw_sec_scope_bind(s, f2.set);
    assert_true(b->broken);
    assert_int_equal(decide(b, bob, "read", NULL), SW_SEC_DENY);
    sw_sec_ctx ctx = sw_sec_ctx_of_identity(bob, b);
    assert_int_equal(ctx.n, 0); /* a process running as it: nothing allowed */
    const char *only_read[] = {"t:read"};
    sw_sec_scope *r = sw_sec_scope_new(f.set, only_read, 1, err, sizeof err);
    sw_sec_scope *rb = sw_sec_scope_bind(r, f2.set);
    assert_false(rb->broken);
    assert_int_equal(decide(rb, bob, "read", NULL), SW_SEC_ALLOW);

    sw_sec_scope_release(rb);
    sw_sec_scope_release(r);
    sw_sec_scope_release(b);
    sw_sec_scope_release(same);
    sw_sec_scope_release(g);
    sw_sec_scope_release(s);
    sw_sec_actor_release(bob);
    sw_sec_actor_release(alice);
    unload(&f2);
    unload(&f);
}

/* An identity of actor id under the group t:roles. */
static sw_sec_identity *identity(fixture *f, const char *id)
{
    char err[128];
    sw_sec_scope *s = sw_sec_scope_group(f->set, "t:roles", err, sizeof err);
    sw_sec_actor *a = actor(id, "user");
    sw_sec_identity *ident = sw_sec_identity_new(a, s);
    sw_sec_actor_release(a);
    sw_sec_scope_release(s);
    return ident;
}

static void test_tokens(void **state)
{
    (void)state;
    fixture f = load(APP);
    sw_token_stores *all = sw_token_stores_new();
    sw_token_store *ts = sw_token_store_of(all, sw_registry_get(f.reg, "t:tokens"));
    assert_ptr_equal(ts, sw_token_store_of(all, sw_registry_get(f.reg, "t:tokens")));
    sw_sec_identity *bob = identity(&f, "user:bob");
    char t1[SW_TOKEN_LEN + 1], t2[SW_TOKEN_LEN + 1], t3[SW_TOKEN_LEN + 1], err[64];
    assert_int_equal(sw_token_create(ts, bob, 0, t1, err, sizeof err), 0);
    assert_int_equal(sw_token_create(ts, bob, 0, t2, err, sizeof err), 0);
    assert_int_equal(strlen(t1), SW_TOKEN_LEN);
    assert_string_not_equal(t1, t2);
    for (const char *c = t1; *c; c++)
        assert_non_null(
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", *c));

    sw_sec_identity *got = sw_token_validate(ts, t1, SW_TOKEN_LEN);
    assert_ptr_equal(got, bob);
    assert_string_equal(got->actor->id, "user:bob");
    sw_sec_identity_release(got);

    /* one answer for a changed byte, a short token, an outside character, a revoked token */
    char other[SW_TOKEN_LEN + 1];
    memcpy(other, t1, sizeof other);
    other[5] = other[5] == 'A' ? 'B' : 'A';
    assert_null(sw_token_validate(ts, other, SW_TOKEN_LEN));
    assert_null(sw_token_validate(ts, t1, SW_TOKEN_LEN - 1));
    other[5] = '*';
    assert_null(sw_token_validate(ts, other, SW_TOKEN_LEN));
    assert_true(sw_token_revoke(ts, t2, SW_TOKEN_LEN));
    assert_false(sw_token_revoke(ts, t2, SW_TOKEN_LEN));
    assert_null(sw_token_validate(ts, t2, SW_TOKEN_LEN));

    /* max_tokens: 3 live; a short-lived one makes room when it expires */
    assert_int_equal(sw_token_create(ts, bob, 20 * 1000000, t2, err, sizeof err), 0);
    assert_int_equal(sw_token_create(ts, bob, 0, t3, err, sizeof err), 0);
    assert_int_equal(sw_token_create(ts, bob, 0, other, err, sizeof err), -1);
    assert_string_equal(err, "token store full");
    nanosleep(&(struct timespec){0, 60 * 1000000}, NULL);
    assert_null(sw_token_validate(ts, t2, SW_TOKEN_LEN)); /* expired */
    assert_int_equal(sw_token_count(ts), 2);
    assert_int_equal(sw_token_create(ts, bob, 0, other, err, sizeof err), 0);

    sw_sec_identity_release(bob);
    sw_token_stores_free(all); /* drops the identities its tokens hold (ASan: no leak) */
    unload(&f);
}

typedef struct racer {
    sw_token_store *ts;
    sw_sec_identity *id;
    const char *live;
    int rounds, ok;
} racer;

static void *validate_loop(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < r->rounds; i++) {
        sw_sec_identity *got = sw_token_validate(r->ts, r->live, SW_TOKEN_LEN);
        r->ok += got != NULL;
        sw_sec_identity_release(got);
    }
    return NULL;
}

static void *churn_loop(void *arg)
{
    racer *r = arg;
    char t[SW_TOKEN_LEN + 1], err[64];
    for (int i = 0; i < r->rounds; i++)
        if (sw_token_create(r->ts, r->id, 0, t, err, sizeof err) == 0)
            sw_token_revoke(r->ts, t, SW_TOKEN_LEN);
    return NULL;
}

/* Workers validate while another creates and revokes (TSan: no race). */
static void test_tokens_threads(void **state)
{
    (void)state;
    fixture f = load("namespace: t\nentries:\n"
                     "  - { name: read, kind: security.policy, groups: [roles], policy: { actions: "
                     "read, resources: orders, effect: allow } }\n"
                     "  - { name: tokens, kind: security.token_store }\n");
    sw_token_stores *all = sw_token_stores_new();
    sw_token_store *ts = sw_token_store_of(all, sw_registry_get(f.reg, "t:tokens"));
    sw_sec_identity *id = identity(&f, "user:bob");
    char live[SW_TOKEN_LEN + 1], err[64];
    assert_int_equal(sw_token_create(ts, id, 0, live, err, sizeof err), 0);
    racer rs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = (racer){ts, id, live, 20000, 0};
        pthread_create(&th[i], NULL, i == 3 ? churn_loop : validate_loop, &rs[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++) assert_int_equal(rs[i].ok, 20000);
    assert_int_equal(sw_token_count(ts), 1);
    sw_sec_identity_release(id);
    sw_token_stores_free(all);
    unload(&f);
}

static void test_audit_limiter(void **state)
{
    (void)state;
    sw_audit *a = sw_audit_new();
    uint64_t held = 0;
    int64_t t = 1000;
    int written = 0;
    for (int i = 0; i < 100; i++) written += sw_audit_admit(a, t, "denied", "u", "x", "r", &held);
    assert_int_equal(written, SW_AUDIT_BURST);
    /* another kind gets through and tells what was held back */
    assert_true(sw_audit_admit(a, t, "denied", "u", "x", "other", &held));
    assert_int_equal(held, 100 - SW_AUDIT_BURST);
    /* the window ends: the first kind gets through again, with nothing left to tell */
    assert_true(sw_audit_admit(a, t + SW_AUDIT_WINDOW_NS, "denied", "u", "x", "r", &held));
    assert_int_equal(held, 0);
    /* many distinct kinds: at most SW_AUDIT_MAX_PER_S a second in all */
    int64_t t2 = t + 3 * SW_AUDIT_WINDOW_NS;
    written = 0;
    for (int i = 0; i < 1000; i++) {
        char r[16];
        snprintf(r, sizeof r, "r%d", i);
        written += sw_audit_admit(a, t2, "denied", "u", "x", r, &held);
    }
    assert_int_equal(written, SW_AUDIT_MAX_PER_S);
    assert_true(sw_audit_admit(a, t2 + 1000000000, "minted", "u", "x", "r", &held));
    assert_int_equal(held, 1000 - SW_AUDIT_MAX_PER_S);
    sw_audit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_tokens_threads),
        cmocka_unit_test(test_audit_limiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
