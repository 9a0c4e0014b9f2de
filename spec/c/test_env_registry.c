/* Unit tests for the environment in the registry (docs/registry.md): ${env:NAME} substitution
 * in values at load (registry/env_subst.c through yaml_tree.c), with its defaults, escape and
 * errors at file:line:col, keys left alone; and the env.variables kind with its index
 * (registry/env_vars.c): defaults, from_process, names checked, a default given twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "env_vars.h"
#include "registry_helpers.h"

#define HEAD "namespace: app\nentries:\n"

static int setup(void **state)
{
    (void)state;
    setenv("T_PORT", "8080", 1);
    setenv("T_NAME", "steward", 1);
    setenv("T_EMPTY", "", 1);
    unsetenv("T_MISSING");
    return 0;
}

static const sw_node *field_of(const sw_registry *r, const char *id, const char *key)
{
    const sw_entry *e = sw_registry_get(r, id);
    assert_non_null(e);
    return sw_node_get(e->node, key);
}

static void test_values_are_substituted(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(HEAD "  - name: s\n"
                                      "    kind: registry.entry\n"
                                      "    port: ${env:T_PORT}\n"
                                      "    quoted: \"${env:T_PORT}\"\n"
                                      "    url: \"http://${env:T_NAME}:${env:T_PORT}/x\"\n"
                                      "    dflt: ${env:T_MISSING:-fallback}\n"
                                      "    empty_dflt: ${env:T_EMPTY:-used}\n"
                                      "    empty: \"[${env:T_EMPTY}]\"\n"
                                      "    escaped: \"$${env:T_PORT} and ${other} and $$x\"\n"
                                      "    list: [ \"${env:T_NAME}\" ]\n");
    const sw_node *port = field_of(r, "app:s", "port");
    assert_string_equal(port->str, "8080");
    assert_int_equal(port->scalar, SW_SCALAR_INT); /* typed after substitution, as written */
    const sw_node *quoted = field_of(r, "app:s", "quoted");
    assert_string_equal(quoted->str, "8080");
    assert_int_equal(quoted->scalar, SW_SCALAR_STRING);
    assert_string_equal(field_of(r, "app:s", "url")->str, "http://steward:8080/x");
    assert_string_equal(field_of(r, "app:s", "dflt")->str, "fallback");
    assert_string_equal(field_of(r, "app:s", "empty_dflt")->str, "used");
    assert_string_equal(field_of(r, "app:s", "empty")->str, "[]");
    assert_string_equal(field_of(r, "app:s", "escaped")->str, "${env:T_PORT} and ${other} and $$x");
    assert_string_equal(field_of(r, "app:s", "list")->kids[0]->str, "steward");
    sw_registry_free(r);
}

static void test_keys_are_not_substituted(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(HEAD "  - name: s\n"
                                      "    kind: registry.entry\n"
                                      "    data:\n"
                                      "      ${env:T_NAME}: 1\n");
    const sw_node *data = field_of(r, "app:s", "data");
    assert_string_equal(sw_node_key(data, 0)->str, "${env:T_NAME}");
    sw_registry_free(r);
}

static void test_missing_variable_is_an_error_at_its_place(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(HEAD "  - name: s\n"
                     "    kind: registry.entry\n"
                     "    a: ${env:T_MISSING}\n"
                     "    b: \"x${env:T_MISSING2}\"\n",
                &d);
    const sw_diag *e = t_need_diag(&d, "environment variable T_MISSING is not set");
    assert_string_equal(e->file, T_FILE);
    assert_int_equal(e->line, 5);
    assert_int_equal(e->col, 8);
    e = t_need_diag(&d, "environment variable T_MISSING2 is not set");
    assert_int_equal(e->line, 6); /* every one is reported, not only the first */
    sw_diags_free(&d);
}

static void test_malformed_references_are_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"\"${env:}\"",
                                      "\"${env:1X}\"",
                                      "\"${env:A-B}\"",
                                      "\"${env:T_PORT\"",
                                      "\"${env:T_PORT:default}\"",
                                      "\"${env:T_PORT:}\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, HEAD "  - name: s\n    kind: registry.entry\n    a: %s\n",
                 bad[i]);
        sw_diags d;
        t_must_fail(yaml, &d);
        if (!t_find_diag(&d, "malformed") && !t_find_diag(&d, "unterminated")) {
            t_print_diags(&d);
            fail_msg("%s: no malformed-reference error", bad[i]);
        }
        sw_diags_free(&d);
    }
}

static void test_env_variables_are_indexed(void **state)
{
    (void)state;
    sw_registry *r = t_must_load(HEAD "  - name: vars\n"
                                      "    kind: env.variables\n"
                                      "    vars: { MODE: dev, PORT: 80, T_NAME: none }\n"
                                      "    from_process: [ T_NAME, T_MISSING ]\n"
                                      "  - name: more\n"
                                      "    kind: env.variables\n"
                                      "    from_process: [ T_PORT, T_NAME ]\n");
    const sw_env_exposed *v = sw_registry_env(r, "MODE");
    assert_non_null(v);
    assert_false(v->from_process);
    assert_string_equal(sw_env_value(v), "dev");
    assert_string_equal(sw_env_value(sw_registry_env(r, "PORT")), "80");
    /* in vars and from_process: the host's value wins when it is set */
    assert_string_equal(sw_env_value(sw_registry_env(r, "T_NAME")), "steward");
    assert_string_equal(sw_env_value(sw_registry_env(r, "T_PORT")), "8080");
    /* from_process only, not set: no value */
    assert_non_null(sw_registry_env(r, "T_MISSING"));
    assert_null(sw_env_value(sw_registry_env(r, "T_MISSING")));
    assert_null(sw_registry_env(r, "HOME")); /* not exposed */
    sw_registry_free(r);
}

static void test_env_variables_errors(void **state)
{
    (void)state;
    sw_diags d;
    t_must_fail(HEAD "  - name: a\n"
                     "    kind: env.variables\n"
                     "    vars: { X: 1, 9BAD: 2, NULLED: ~, NESTED: { a: 1 } }\n"
                     "    from_process: [ \"A-B\" ]\n"
                     "  - name: b\n"
                     "    kind: env.variables\n"
                     "    vars: { X: 2 }\n"
                     "  - name: c\n"
                     "    kind: env.variables\n"
                     "    vars: [ X ]\n",
                &d);
    t_need_field(&d, "app:a", "vars.9BAD");
    t_need_field(&d, "app:a", "vars.NULLED");
    t_need_field(&d, "app:a", "vars.NESTED");
    t_need_field(&d, "app:a", "from_process[0]");
    t_need_field(&d, "app:c", "vars");
    const sw_diag *e = t_need_field(&d, "app:b", "vars.X");
    assert_non_null(strstr(e->msg, "already has a default in app:a"));
    sw_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_are_substituted),
        cmocka_unit_test(test_keys_are_not_substituted),
        cmocka_unit_test(test_missing_variable_is_an_error_at_its_place),
        cmocka_unit_test(test_malformed_references_are_errors),
        cmocka_unit_test(test_env_variables_are_indexed),
        cmocka_unit_test(test_env_variables_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
