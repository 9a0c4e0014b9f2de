/* Unit tests for reload's change detection (registry/change.c): a service changed when its own
 * entry or anything it reaches by reference (code, libraries, data, groups) differs in content;
 * policies and unrelated entries do not count; layout (line numbers) does not count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "change.h"
#include "registry_helpers.h"

static const char *const base =
    "namespace: app\n"
    "entries:\n"
    "  - { name: lib, kind: library.lua, source: 'return {v = 1}' }\n"
    "  - { name: p, kind: process.lua, source: 'return 1', imports: { l: app:lib } }\n"
    "  - { name: q, kind: process.lua, source: 'return 2' }\n"
    "  - { name: cfg, kind: registry.entry, data: { url: 'x' } }\n"
    "  - { name: pol, kind: security.policy, policy: { actions: a, resources: '*', effect: allow } "
    "}\n"
    "  - { name: a, kind: process.service, process: app:p, config: { c: app:cfg, p: app:pol } }\n"
    "  - { name: b, kind: process.service, process: app:q }\n"
    "  - { name: lib2, kind: library.lua, source: 'return {w = 1}' }\n"
    "  - { name: fn, kind: function.lua, source: 'return 3', imports: { l: app:lib2 } }\n"
    "  - { name: c, kind: process.service, process: app:q, config: { handler: app:fn } }\n";

/* Loads base with `from` replaced by `to` and says whether service id changed against base. */
static bool changed_after(const char *from, const char *to, const char *id)
{
    const char *at = strstr(base, from);
    assert_non_null(at);
    char text[2048];
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    sw_registry *old = t_must_load(base), *new = t_must_load(text);
    size_t oi = sw_graph_index(&old->graph, t_get(old, id)),
           ni = sw_graph_index(&new->graph, t_get(new, id));
    bool changed = sw_service_changed(old, oi, new, ni);
    sw_registry_free(old);
    sw_registry_free(new);
    return changed;
}

static void test_identical_is_unchanged(void **st)
{
    (void)st;
    assert_false(changed_after("return 1", "return 1", "app:a"));
    assert_false(
        changed_after("entries:\n", "entries:\n\n\n", "app:a")); /* other lines, same content */
}

static void test_own_field_changes(void **st)
{
    (void)st;
    assert_true(changed_after("process: app:q", "process: app:q, input: [1]", "app:b"));
    assert_false(changed_after("process: app:q", "process: app:q, input: [1]", "app:a"));
}

static void test_code_change(void **st)
{
    (void)st;
    assert_true(changed_after("return 1'", "return 10'", "app:a"));
    assert_false(changed_after("return 1'", "return 10'", "app:b"));
}

static void test_library_change_reaches_importer(void **st)
{
    (void)st;
    assert_true(changed_after("{v = 1}", "{v = 2}", "app:a"));
    assert_false(changed_after("{v = 1}", "{v = 2}", "app:b"));
}

static void test_config_entry_change(void **st)
{
    (void)st;
    assert_true(changed_after("url: 'x'", "url: 'y'", "app:a"));
    assert_false(changed_after("url: 'x'", "url: 'y'", "app:b"));
}

/* A function.lua named in a service's config is reached like a process.lua: its code, its
 * imports. */
static void test_function_change_reaches_service(void **st)
{
    (void)st;
    assert_true(changed_after("return 3", "return 4", "app:c"));
    assert_false(changed_after("return 3", "return 4", "app:b"));
    assert_true(changed_after("{w = 1}", "{w = 2}", "app:c"));
    assert_false(changed_after("{w = 1}", "{w = 2}", "app:a"));
}

static void test_policy_change_is_not_a_change(void **st)
{
    (void)st;
    assert_false(changed_after("effect: allow", "effect: deny", "app:a"));
}

static void test_scalar_type_counts(void **st)
{
    (void)st;
    assert_true(changed_after("url: 'x'", "url: 1", "app:a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_is_unchanged),
        cmocka_unit_test(test_own_field_changes),
        cmocka_unit_test(test_code_change),
        cmocka_unit_test(test_library_change_reaches_importer),
        cmocka_unit_test(test_config_entry_change),
        cmocka_unit_test(test_function_change_reaches_service),
        cmocka_unit_test(test_policy_change_is_not_a_change),
        cmocka_unit_test(test_scalar_type_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
