/* `steward graph DIR`: the service dependency graph as text (by start level), dot or mermaid.
 * Text with --why also shows each service's security context: its actor and every policy it
 * gets, with where it comes from (compiled by the policy engine, as `run` would). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "http_routes.h"
#include "json.h"
#include "registry.h"
#include "security.h"

static bool names_policy(const sw_security_ctx *sc, const sw_entry *policy)
{
    for (size_t k = 0; k < sc->policies.n; k++)
        if (sc->policies.v[k].target == policy) return true;
    return false;
}

/* ", group a:g" for each group of the context that the policy joins. */
static void print_policy_groups(const sw_security_ctx *sc, const sw_entry *policy, bool first)
{
    for (size_t k = 0; k < sc->groups.n; k++) {
        const sw_strlist *joined = &policy->as.policy.groups;
        for (size_t g = 0; g < joined->n; g++) {
            if (strcmp(joined->v[g], sc->groups.v[k].id) != 0) continue;
            printf("%slifecycle.security.groups %s", first ? "" : ", ", sc->groups.v[k].id);
            first = false;
        }
    }
}

static void print_security(const sw_security_set *set, const sw_entry *svc)
{
    const sw_sec_ctx *ctx = sw_security_ctx_of(set, svc->id);
    if (!ctx) return;
    const sw_entry *from = svc;
    const sw_security_ctx *sc = sw_security_declared(svc, &from);
    if (from != svc) printf("    security from group %s\n", from->id);
    if (ctx->actor_id) printf("    actor %s\n", ctx->actor_id);
    else printf("    no actor (strict mode denies every check)\n");
    for (size_t i = 0; i < ctx->n; i++) {
        const sw_entry *p = sw_sec_ctx_policy(ctx, i);
        bool direct = names_policy(sc, p);
        printf("    policy %s %s  (%s", p->as.policy.effect == SW_EFFECT_DENY ? "deny" : "allow",
               p->id, direct ? "lifecycle.security.policies" : "");
        print_policy_groups(sc, p, !direct);
        printf(")\n");
    }
}

static void print_escaped(const char *s, const char *quote_as)
{
    for (; *s; s++) {
        if (*s == '"') fputs(quote_as, stdout);
        else if (*s == '\\' && strcmp(quote_as, "\\\"") == 0) fputs("\\\\", stdout);
        else if (*s == '\n') fputc(' ', stdout);
        else fputc(*s, stdout);
    }
}

/* An http.service's routes: method, path, function, the endpoint and router they come from, and
 * the token store of their auth (docs/registry.md "auth of routers and endpoints"). */
static void print_routes(const sw_registry *r, const sw_entry *svc)
{
    sw_hroutes routes;
    if (svc->kind != SW_KIND_HTTP_SERVICE || sw_hroutes_build(&routes, r, svc) != 0) return;
    for (size_t i = 0; i < routes.n; i++) {
        const sw_hroute *rt = &routes.v[i];
        const sw_http_endpoint *ep = &rt->endpoint->as.http_endpoint;
        printf("    route %s %s -> %s  (%s via router %s%s%s%s)\n", ep->method, rt->pattern,
               ep->func.id, rt->endpoint->id, ep->router.id, rt->auth ? ", auth " : "",
               rt->auth ? rt->auth->token_store.id : "",
               rt->auth && !rt->auth->required ? " optional" : "");
    }
    sw_hroutes_free(&routes);
}

static void print_text(const sw_graph *g, bool why, const sw_security_set *set)
{
    for (size_t lvl = 0; lvl < g->n_levels; lvl++) {
        printf("level %zu:\n", lvl);
        for (size_t i = 0; i < g->n; i++) {
            if (g->level[i] != lvl) continue;
            printf("  %s", g->services[i]->id);
            if (!why) {
                for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++)
                    printf("%s%s", k == g->deps[i] ? " -> " : ", ",
                           g->services[g->edges[k].to]->id);
                putchar('\n');
                continue;
            }
            putchar('\n');
            for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++)
                printf("    -> %s  (%s)\n", g->services[g->edges[k].to]->id, g->edges[k].why);
            if (set) print_security(set, g->services[i]);
            if (set) print_routes(sw_security_registry(set), g->services[i]);
        }
    }
}

static void print_groups(const sw_registry *r)
{
    static const char *const strategies[] = {"one_for_one", "one_for_all", "rest_for_one"};
    bool any = false;
    for (size_t i = 0; i < r->n_entries; i++) {
        const sw_entry *e = r->entries[i];
        if (e->kind != SW_KIND_GROUP) continue;
        if (!any) printf("groups:\n");
        any = true;
        printf("  %s (%s):", e->id, strategies[e->as.group.strategy]);
        for (size_t c = 0; c < e->as.group.children.n; c++)
            printf("%s%s", c ? ", " : " ", e->as.group.children.v[c].id);
        putchar('\n');
    }
}

static void print_dot(const sw_graph *g, bool why)
{
    printf("digraph steward {\n  rankdir=BT;\n  node [shape=box];\n");
    for (size_t i = 0; i < g->n; i++) printf("  \"%s\";\n", g->services[i]->id);
    for (size_t k = 0; k < g->n_edges; k++) {
        printf("  \"%s\" -> \"%s\"", g->services[g->edges[k].from]->id,
               g->services[g->edges[k].to]->id);
        if (why) {
            printf(" [label=\"");
            print_escaped(g->edges[k].why, "\\\"");
            printf("\"]");
        }
        printf(";\n");
    }
    printf("}\n");
}

static void print_mermaid(const sw_graph *g, bool why)
{
    printf("flowchart BT\n");
    for (size_t i = 0; i < g->n; i++) printf("  s%zu[\"%s\"]\n", i, g->services[i]->id);
    for (size_t k = 0; k < g->n_edges; k++) {
        printf("  s%zu -->", g->edges[k].from);
        if (why) {
            printf("|\"");
            print_escaped(g->edges[k].why, "#quot;");
            printf("\"|");
        }
        printf(" s%zu\n", g->edges[k].to);
    }
}

/* --json: {"services":[{id, level, depends_on:[{id, why}]}], "groups":[{id, strategy,
 * children}]} (docs/registry.md "steward check and steward graph"). */
static json_t *graph_json(const sw_registry *r)
{
    static const char *const strategies[] = {"one_for_one", "one_for_all", "rest_for_one"};
    const sw_graph *g = &r->graph;
    json_t *services = json_array(), *groups = json_array();
    for (size_t i = 0; i < g->n; i++) {
        json_t *deps = json_array();
        for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++)
            json_array_append_new(deps, json_pack("{s:o, s:o}", "id",
                                                  sw_json_str(g->services[g->edges[k].to]->id),
                                                  "why", sw_json_str(g->edges[k].why)));
        json_array_append_new(services,
                              json_pack("{s:o, s:I, s:o}", "id", sw_json_str(g->services[i]->id),
                                        "level", (json_int_t)g->level[i], "depends_on", deps));
    }
    for (size_t i = 0; i < r->n_entries; i++) {
        const sw_entry *e = r->entries[i];
        if (e->kind != SW_KIND_GROUP) continue;
        json_t *children = json_array();
        for (size_t c = 0; c < e->as.group.children.n; c++)
            json_array_append_new(children, sw_json_str(e->as.group.children.v[c].id));
        json_array_append_new(groups,
                              json_pack("{s:o, s:s, s:o}", "id", sw_json_str(e->id), "strategy",
                                        strategies[e->as.group.strategy], "children", children));
    }
    return json_pack("{s:o, s:o}", "services", services, "groups", groups);
}

static void print_json(const sw_registry *r)
{
    json_t *doc = graph_json(r);
    char *text = sw_json_dump(doc, true, NULL);
    if (text) fputs(text, stdout);
    free(text);
    json_decref(doc);
}

int sw_cmd_graph(const sw_cli *cli)
{
    sw_registry *r = sw_load_or_report(cli->dir);
    if (!r) return 2;
    const char *format = cli->format ? cli->format : "text";
    if (cli->json) print_json(r);
    else if (strcmp(format, "dot") == 0) print_dot(&r->graph, cli->why);
    else if (strcmp(format, "mermaid") == 0) print_mermaid(&r->graph, cli->why);
    else {
        char err[256];
        sw_security_set *set = cli->why ? sw_security_compile(r, err, sizeof err) : NULL;
        print_text(&r->graph, cli->why, set);
        sw_security_release(set);
        print_groups(r);
    }
    sw_registry_free(r);
    return 0;
}
