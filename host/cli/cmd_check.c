/* `steward check DIR`: load and validate; every error, or a one-line summary. */
#include <stdio.h>

#include "commands.h"
#include "registry.h"

sw_registry *sw_load_or_report(const char *dir)
{
    sw_diags diags;
    sw_diags_init(&diags);
    sw_registry *r = sw_registry_load_dir(dir, &diags);
    if (!r) {
        sw_diags_finish(&diags);
        sw_diags_print(&diags, stderr);
        fprintf(stderr, "%zu error%s\n", diags.n, diags.n == 1 ? "" : "s");
    }
    sw_diags_free(&diags);
    return r;
}

int sw_cmd_check(const sw_cli *cli)
{
    sw_registry *r = sw_load_or_report(cli->dir);
    if (!r) return 2;
    printf("ok: %zu entr%s, %zu service%s\n", r->n_entries, r->n_entries == 1 ? "y" : "ies",
           r->n_services, r->n_services == 1 ? "" : "s");
    sw_registry_free(r);
    return 0;
}
