/* Unit tests for module trees (registry/lib_tree.c, docs/registry.md "Module trees"): a
 * dir:// library reads every *.lua file of its directory at load, finds modules as Lua's
 * package.path would (a/b.lua before a/b/init.lua, DIR.lua beside the directory for the root),
 * skips hidden files, refuses symlinks that leave the tree, and compares by content. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib_tree.h"
#include "registry.h"

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256], cmd[320];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test_lib_tree.XXXXXX");
    assert_non_null(mkdtemp(root));
    put("app.yaml", "namespace: app\n"
                    "entries:\n"
                    "  - { name: t, kind: library.lua, source: dir://lib/pkg }\n");
    put("lib/pkg/init.lua", "return 'root'\n");
    put("lib/pkg/a.lua", "return 'a'\n");
    put("lib/pkg/b/init.lua", "return 'b'\n");
    put("lib/pkg/b/c.lua", "return 'b.c'\n");
    put("lib/pkg/both.lua", "return 'file first'\n");
    put("lib/pkg/both/init.lua", "return 'init second'\n");
    put("lib/pkg/.hidden.lua", "return 'hidden'\n");
    put("lib/pkg/notes.txt", "not lua\n");
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static sw_registry *load(sw_diags *d)
{
    sw_diags_init(d);
    return sw_registry_load_dir(root, d);
}

static const sw_lib_tree *tree_of(const sw_registry *r)
{
    const sw_entry *e = sw_registry_get(r, "app:t");
    assert_non_null(e);
    return e->as.library_lua.source.tree;
}

static void finds_modules_as_package_path_would(void **state)
{
    (void)state;
    sw_diags d;
    sw_registry *r = load(&d);
    assert_non_null(r);
    const sw_lib_tree *t = tree_of(r);
    assert_non_null(t);
    assert_string_equal(t->name, "pkg");
    assert_int_equal(t->n, 6); /* not the hidden file, not notes.txt */
    assert_string_equal(sw_lib_tree_find(t, "a")->text, "return 'a'\n");
    assert_string_equal(sw_lib_tree_find(t, "b")->rel, "b/init.lua");
    assert_string_equal(sw_lib_tree_find(t, "b.c")->rel, "b/c.lua");
    assert_string_equal(sw_lib_tree_find(t, "both")->rel, "both.lua");
    assert_null(sw_lib_tree_find(t, "nope"));
    assert_null(sw_lib_tree_find(t, ".hidden"));
    assert_null(sw_lib_tree_find(t, "b..c"));
    /* the root module is init.lua here; its path is what chunk names show */
    const sw_source *src = &sw_registry_get(r, "app:t")->as.library_lua.source;
    assert_string_equal(src->text, "return 'root'\n");
    assert_non_null(strstr(src->path, "/lib/pkg/init.lua"));
    sw_registry_free(r);
    sw_diags_free(&d);
}

static void the_file_beside_the_directory_is_the_root(void **state)
{
    (void)state;
    put("lib/pkg.lua", "return 'beside'\n");
    sw_diags d;
    sw_registry *r = load(&d);
    assert_non_null(r);
    assert_string_equal(sw_registry_get(r, "app:t")->as.library_lua.source.text,
                        "return 'beside'\n");
    sw_registry_free(r);
    sw_diags_free(&d);
    char path[128];
    snprintf(path, sizeof path, "%s/lib/pkg.lua", root);
    unlink(path);
}

static void compares_by_content(void **state)
{
    (void)state;
    sw_diags d1, d2;
    sw_registry *a = load(&d1);
    put("lib/pkg/b/c.lua", "return 'changed'\n");
    sw_registry *b = load(&d2);
    assert_true(sw_lib_tree_equal(tree_of(a), tree_of(a)));
    assert_false(sw_lib_tree_equal(tree_of(a), tree_of(b)));
    put("lib/pkg/b/c.lua", "return 'b.c'\n");
    sw_registry_free(a);
    sw_registry_free(b);
    sw_diags_free(&d1);
    sw_diags_free(&d2);
}

static void refuses_a_symlink_that_leaves_the_tree(void **state)
{
    (void)state;
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/outside.lua", root);
    snprintf(link, sizeof link, "%s/lib/pkg/leak.lua", root);
    put("outside.lua", "return 'secret'\n");
    assert_int_equal(symlink(target, link), 0);
    sw_diags d;
    sw_registry *r = load(&d);
    assert_null(r);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.v[0].msg, "leak.lua: a symlink that leaves the tree"));
    sw_diags_free(&d);
    unlink(link);
    /* one that stays inside is followed */
    snprintf(target, sizeof target, "%s/lib/pkg/a.lua", root);
    snprintf(link, sizeof link, "%s/lib/pkg/alias.lua", root);
    assert_int_equal(symlink(target, link), 0);
    r = load(&d);
    assert_non_null(r);
    assert_string_equal(sw_lib_tree_find(tree_of(r), "alias")->text, "return 'a'\n");
    sw_registry_free(r);
    sw_diags_free(&d);
    unlink(link);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_modules_as_package_path_would),
        cmocka_unit_test(the_file_beside_the_directory_is_the_root),
        cmocka_unit_test(compares_by_content),
        cmocka_unit_test(refuses_a_symlink_that_leaves_the_tree),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
