/* env.variables (env_vars.h): the field readers of `vars` and `from_process`, and the index
 * the loader builds once every entry is parsed (a default given twice is an error). */
#include "env_vars.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_subst.h"
#include "loader_internal.h"

#define N(a) (sizeof(a) / sizeof *(a))

static bool check_name(sw_parse *p, const sw_node *n)
{
    if (sw_env_name_valid(n->str, n->len)) return true;
    sw_parse_error(p, n,
                   "\"%s\" is not a variable name (letters, digits and _, not starting with "
                   "a digit)",
                   n->str);
    return false;
}

static void parse_vars(sw_parse *p, const sw_node *n, void *dst)
{
    sw_env_variables *ev = dst;
    if (n->type != SW_NODE_MAP) {
        sw_parse_error(p, n, "expected a mapping {NAME: default}, got %s", sw_node_describe(n));
        return;
    }
    ev->vars = sw_arena_alloc(p->arena, (n->n ? n->n : 1) * sizeof *ev->vars);
    for (size_t i = 0; i < n->n; i++) {
        const sw_node *key = sw_node_key(n, i), *val = sw_node_val(n, i);
        size_t saved = sw_path_push(p, key->str);
        if (!check_name(p, key)) {
        } else if (val->type != SW_NODE_SCALAR || val->scalar == SW_SCALAR_NULL) {
            sw_parse_error(p, val, "expected a default value (a string, number or boolean), got %s",
                           sw_node_describe(val));
        } else {
            ev->vars[ev->n_vars++] = (sw_env_default){key->str, val->str, key};
        }
        sw_path_pop(p, saved);
    }
}

static void parse_from_process(sw_parse *p, const sw_node *n, void *dst)
{
    sw_strlist *names = dst;
    if (!sw_read_strlist(p, n, false, names)) return;
    for (size_t i = 0; i < n->n; i++) {
        size_t saved = sw_path_push_index(p, i);
        if (!check_name(p, n->kids[i])) names->n = 0;
        sw_path_pop(p, saved);
    }
}

static const sw_field env_variables_fields[] = {
    {.name = "vars", .type = SW_F_CUSTOM, .offset = 0, .custom = parse_vars},
    {.name = "from_process",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_env_variables, from_process),
     .custom = parse_from_process},
};
const sw_schema sw_env_variables_schema = {env_variables_fields, N(env_variables_fields)};

/* ---- the index ---- */

static sw_env_exposed *exposed(loader *L, const char *name, const sw_entry *e)
{
    sw_env_exposed *v = sw_strmap_get(&L->r->env, name);
    if (v) return v;
    v = sw_arena_alloc(&L->r->arena, sizeof *v);
    v->name = name;
    v->entry = e;
    sw_strmap_put(&L->r->env, name, v);
    return v;
}

static void index_defaults(loader *L, const sw_entry *e)
{
    const sw_env_variables *ev = &e->as.env_variables;
    for (size_t i = 0; i < ev->n_vars; i++) {
        sw_env_exposed *v = exposed(L, ev->vars[i].name, e);
        if (v->fallback) {
            char msg[600];
            snprintf(msg, sizeof msg, "variable %s already has a default in %s (%s:%u:%u)", v->name,
                     v->entry->id, v->entry->file, v->entry->line, v->entry->col);
            char field[300];
            snprintf(field, sizeof field, "vars.%s", v->name);
            sw_loader_error_at(L, e->file, ev->vars[i].node, e->id, field, msg);
            continue;
        }
        v->fallback = ev->vars[i].value;
        v->entry = e;
    }
}

void sw_loader_index_env(loader *L)
{
    for (size_t i = 0; i < L->r->n_entries; i++) {
        const sw_entry *e = L->r->entries[i];
        if (e->kind != SW_KIND_ENV_VARIABLES) continue;
        index_defaults(L, e);
        for (size_t k = 0; k < e->as.env_variables.from_process.n; k++)
            exposed(L, e->as.env_variables.from_process.v[k], e)->from_process = true;
    }
}

const sw_env_exposed *sw_registry_env(const sw_registry *r, const char *name)
{
    return sw_strmap_get(&r->env, name);
}

const char *sw_env_value(const sw_env_exposed *v)
{
    const char *host = v->from_process ? getenv(v->name) : NULL;
    return host ? host : v->fallback;
}
