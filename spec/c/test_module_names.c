/* The host's Lua module names exist once (registry/kinds.c): every module the host installs in
 * a process is on that list (so an import alias cannot shadow it), and every name on the list
 * is something a process can reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api.h"
#include "kinds.h"

static bool listed(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(*names, name) == 0) return true;
    return false;
}

static void test_installed_modules_are_reserved(void **state)
{
    (void)state;
    for (const sw_vm_lib *l = sw_api_libs; l->name; l++) {
        if (strcmp(l->name, "require") == 0) continue; /* a global function, not a module */
        if (!listed(sw_host_module_names, l->name))
            fail_msg("host module %s is not reserved", l->name);
    }
}

static void test_reserved_names_are_reachable(void **state)
{
    (void)state;
    /* the built-in libraries the sandbox opens itself (vm.h), then the host's */
    static const char *const builtin[] = {"string", "table", "math", "bit", "coroutine", NULL};
    for (const char *const *m = sw_host_module_names; *m; m++) {
        bool host = false;
        for (const sw_vm_lib *l = sw_api_libs; l->name && !host; l++)
            host = strcmp(l->name, *m) == 0;
        if (!host && !listed(builtin, *m)) fail_msg("reserved name %s names no module", *m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed_modules_are_reserved),
        cmocka_unit_test(test_reserved_names_are_reachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
