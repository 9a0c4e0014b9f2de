/* `steward check DIR [--config FILE] [--json]`: load and validate the registry, compile every
 * Lua source, and validate the host config; every error, or a one-line summary. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "json.h"
#include "registry.h"
#include "runtime.h"

/* The registry of dir with its sources compiled, or NULL with the errors in diags. */
static sw_registry *load_checked(const char *dir, sw_diags *diags)
{
    sw_registry *r = sw_registry_load_dir(dir, diags);
    if (!r || sw_check_sources(r, diags) == 0) return r;
    sw_registry_free(r);
    return NULL;
}

static void print_errors(sw_diags *diags)
{
    sw_diags_print(diags, stderr);
    fprintf(stderr, "%zu error%s\n", diags->n, diags->n == 1 ? "" : "s");
}

/* run and graph load without compiling: a chunk that does not compile is the error of the
 * spawn that needs it (docs/registry.md), so an app with one broken optional entry still runs. */
sw_registry *sw_load_or_report(const char *dir)
{
    sw_diags diags;
    sw_diags_init(&diags);
    sw_registry *r = sw_registry_load_dir(dir, &diags);
    if (!r) {
        sw_diags_finish(&diags);
        print_errors(&diags);
    }
    sw_diags_free(&diags);
    return r;
}

sw_registry *sw_load_host(const sw_cli *cli, sw_host_config *cfg)
{
    if (sw_host_config_read(cfg, cli->config) != 0) return NULL;
    sw_registry *reg = sw_load_or_report(cli->dir);
    if (!reg) sw_host_config_free(cfg);
    return reg;
}

static json_t *diag_json(const sw_diag *d)
{
    char text[1024];
    sw_diag_format(d, text, sizeof text);
    return json_pack("{s:o, s:I, s:I, s:o, s:o, s:o, s:o}", "file", sw_json_str(d->file), "line",
                     (json_int_t)d->line, "col", (json_int_t)d->col, "entry", sw_json_str(d->entry),
                     "field", sw_json_str(d->field), "message", sw_json_str(d->msg), "text",
                     sw_json_str(text));
}

/* {"ok":..., "entries":N, "services":M, "errors":[{file, line, col, entry, field, message,
 * text}]} on stdout: docs/operating.md "check --json". */
static void print_json(const sw_registry *r, const sw_diags *diags)
{
    json_t *errors = json_array();
    for (size_t i = 0; i < diags->n; i++) json_array_append_new(errors, diag_json(&diags->v[i]));
    json_t *doc = json_pack("{s:b, s:I, s:I, s:o}", "ok", diags->n == 0, "entries",
                            (json_int_t)(r ? r->n_entries : 0), "services",
                            (json_int_t)(r ? r->n_services : 0), "errors", errors);
    char *text = sw_json_dump(doc, true, NULL);
    if (text) fputs(text, stdout);
    free(text);
    json_decref(doc);
}

int sw_cmd_check(const sw_cli *cli)
{
    sw_diags diags;
    sw_diags_init(&diags);
    sw_registry *r = load_checked(cli->dir, &diags);
    if (cli->config) {
        sw_host_config cfg;
        sw_host_config_defaults(&cfg);
        sw_host_config_load(&cfg, cli->config, &diags);
        sw_host_config_free(&cfg);
    }
    sw_diags_finish(&diags);
    int code = diags.n ? 2 : 0;
    if (cli->json) print_json(r, &diags);
    else if (code) print_errors(&diags);
    else
        printf("ok: %zu entr%s, %zu service%s\n", r->n_entries, r->n_entries == 1 ? "y" : "ies",
               r->n_services, r->n_services == 1 ? "" : "s");
    sw_diags_free(&diags);
    if (r) sw_registry_free(r);
    return code;
}
