/* Dependency extraction and the service graph. What a service depends on (docs/registry.md):
 * explicit depends_on (its own and its enclosing groups'), every string anywhere in its fields
 * that equals an entry id, and transitively what referenced non-service entries reference.
 * Groups stand for their member services; hosts and policies order nothing. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

/* A reference written in one entry: its target and the field path it sits at. Each entry's
 * direct references are collected once; dependencies are then found by a search from each
 * service, so a loop among data entries or a long chain of them needs no recursion and no
 * memo that a loop could leave incomplete. */
typedef struct dref {
    const sw_entry *target;
    const char *path;
    const sw_node *at;
} dref;

typedef struct drefs {
    dref *v;
    size_t n, cap;
} drefs;

/* One step of a service's search: an entry reached through `via` from item `parent`. */
typedef struct hop {
    const sw_entry *entry;
    size_t parent; /* index in the search queue, or NONE for the service itself */
    const dref *via;
} hop;

#define NONE ((size_t)-1)

typedef struct builder {
    sw_graph *g;
    sw_arena *a;
    const sw_strmap *ids;
    const sw_entry *const *entries;
    size_t n_entries;
    size_t *svc_of; /* entry index -> service index or NONE */
    drefs *direct;  /* per entry index */
} builder;

static void dref_add(builder *b, drefs *l, const sw_entry *t, const char *path, const sw_node *at)
{
    if (!t) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        dref *v = sw_arena_alloc(b->a, l->cap * sizeof *v);
        if (l->n) memcpy(v, l->v, l->n * sizeof *v);
        l->v = v;
    }
    l->v[l->n++] = (dref){t, path, at};
}

/* ---- scanning an entry's fields ---- */

typedef struct scan {
    builder *b;
    const sw_entry *self;
    drefs *out;
    const char *const *skip; /* top-level paths handled as typed references or not ordered */
    char path[512];
} scan;

static bool skipped(const scan *s, const char *path)
{
    static const char *const always[] = {"name", "kind", "meta", NULL};
    for (const char *const *k = always; *k; k++)
        if (strcmp(*k, path) == 0) return true;
    for (const char *const *k = s->skip; k && *k; k++)
        if (strcmp(*k, path) == 0) return true;
    return false;
}

/* Appends ".key" or "[i]" to the path at len; returns the new length (truncated to fit). */
static size_t path_append(char *path, size_t size, size_t len, const char *key, size_t index)
{
    char idx[24];
    if (!key) {
        snprintf(idx, sizeof idx, "[%zu]", index);
        key = idx;
    } else if (len && len + 1 < size) {
        path[len++] = '.';
    }
    size_t k = strlen(key);
    if (len + k >= size) k = size - 1 - len;
    memcpy(path + len, key, k);
    path[len + k] = 0;
    return len + k;
}

static void scan_node(scan *s, const sw_node *n, size_t len, int depth)
{
    if (depth > 2 * SW_YAML_MAX_DEPTH) return;
    if (n->type == SW_NODE_SCALAR) {
        if (n->scalar != SW_SCALAR_STRING || !memchr(n->str, ':', n->len)) return;
        const sw_entry *t = sw_strmap_get(s->b->ids, n->str);
        if (t && t != s->self) dref_add(s->b, s->out, t, sw_arena_strdup(s->b->a, s->path), n);
        return;
    }
    for (size_t i = 0; i < n->n; i++) {
        bool map = n->type == SW_NODE_MAP;
        size_t nl =
            path_append(s->path, sizeof s->path, len, map ? sw_node_key(n, i)->str : NULL, i);
        if (depth <= 1 && skipped(s, s->path))
            continue; /* depth 1: lifecycle.depends_on and the like */
        scan_node(s, map ? sw_node_val(n, i) : n->kids[i], nl, depth + 1);
    }
    s->path[len] = 0;
}

static void typed_ref(builder *b, drefs *out, const sw_ref *r, const char *path)
{
    dref_add(b, out, r->target, path, r->node);
}

static void typed_reflist(builder *b, drefs *out, const sw_reflist *l, const char *field)
{
    for (size_t i = 0; i < l->n; i++)
        typed_ref(b, out, &l->v[i], sw_arena_printf(b->a, "%s[%zu]", field, i));
}

static void typed_imports(builder *b, drefs *out, const sw_imports *imps)
{
    for (size_t i = 0; i < imps->n; i++)
        typed_ref(b, out, &imps->v[i].library,
                  sw_arena_printf(b->a, "imports.%s", imps->v[i].alias));
}

static const char *const service_skip[] = {
    "process", "host", "lifecycle.depends_on", "lifecycle.requires", "lifecycle.security", NULL};
static const char *const lua_skip[] = {"source", "imports", NULL};
static const char *const router_skip[] = {"server", "lifecycle.security", NULL};
static const char *const endpoint_skip[] = {"router", "func", NULL};

/* An http.service depends on what its routers' endpoints reach (their functions and what
 * those reference), though the references point from endpoint to router to server: the entries
 * of `kind` whose `ref` field names e are added as e's own references. */
static void typed_referrers(builder *b, drefs *out, const sw_entry *e, sw_kind kind)
{
    for (size_t i = 0; i < b->n_entries; i++) {
        const sw_entry *r = b->entries[i];
        if (r->kind != kind) continue;
        const sw_ref *ref =
            kind == SW_KIND_HTTP_ROUTER ? &r->as.http_router.server : &r->as.http_endpoint.router;
        if (ref->target == e)
            dref_add(b, out, r, sw_arena_printf(b->a, "%s %s", sw_kind_name(kind), r->id), r->node);
    }
}
static const char *const group_skip[] = {"children", "lifecycle", NULL};

/* The field an entry's explicit dependencies were written in: depends_on or its alias requires. */
static const char *depends_field(const sw_entry *e)
{
    return sw_node_get(sw_node_get(e->node, "lifecycle"), "requires") ? "lifecycle.requires"
                                                                      : "lifecycle.depends_on";
}

/* Everything entry e references directly. Hosts and policies never lead anywhere, so they
 * are not collected. */
static void collect(builder *b, const sw_entry *e, drefs *out)
{
    scan s = {.b = b, .self = e, .out = out};
    switch (e->kind) {
    case SW_KIND_SERVICE:
        s.skip = service_skip;
        typed_ref(b, out, &e->as.service.process, "process");
        typed_reflist(b, out, &e->as.service.lifecycle.depends_on, depends_field(e));
        for (const sw_entry *g = e->parent; g; g = g->parent)
            typed_reflist(b, out, &g->as.group.lifecycle.depends_on,
                          sw_arena_printf(b->a, "group %s %s", g->id, depends_field(g)));
        break;
    case SW_KIND_HTTP_SERVICE:
        s.skip = service_skip;
        typed_reflist(b, out, &e->as.service.lifecycle.depends_on, depends_field(e));
        for (const sw_entry *g = e->parent; g; g = g->parent)
            typed_reflist(b, out, &g->as.group.lifecycle.depends_on,
                          sw_arena_printf(b->a, "group %s %s", g->id, depends_field(g)));
        typed_referrers(b, out, e, SW_KIND_HTTP_ROUTER);
        break;
    case SW_KIND_HTTP_ROUTER:
        s.skip = router_skip;
        typed_ref(b, out, &e->as.http_router.server, "server");
        typed_referrers(b, out, e, SW_KIND_HTTP_ENDPOINT);
        break;
    case SW_KIND_HTTP_ENDPOINT:
        s.skip = endpoint_skip;
        typed_ref(b, out, &e->as.http_endpoint.router, "router");
        typed_ref(b, out, &e->as.http_endpoint.func, "func");
        break;
    case SW_KIND_GROUP:
        s.skip = group_skip; /* a group's depends_on is applied to its children above */
        typed_reflist(b, out, &e->as.group.children, "children");
        break;
    case SW_KIND_PROCESS_LUA:
    case SW_KIND_FUNCTION_LUA:
    case SW_KIND_TEST_LUA:
        s.skip = lua_skip;
        typed_imports(b, out, &e->as.process_lua.imports);
        break;
    case SW_KIND_LIBRARY_LUA:
        s.skip = lua_skip;
        typed_imports(b, out, &e->as.library_lua.imports);
        break;
    case SW_KIND_DATA: break;
    default: return;
    }
    scan_node(&s, e->node, 0, 0);
}

/* "config.cfg via app:cfg field data.db", "depends_on[0] via group app:g". */
static void render_why(const hop *q, size_t item, const dref *last, char *buf, size_t size)
{
    size_t n = 0;
    for (size_t i = item; i != NONE; i = q[i].parent) n++;
    size_t *chain = malloc(n * sizeof *chain);
    if (!chain) abort();
    for (size_t i = item, k = n; i != NONE; i = q[i].parent) chain[--k] = i;
    size_t len = 0;
    bool skip_path = false;
    for (size_t k = 0; k < n; k++) {
        const hop *h = &q[chain[k]];
        if (!h->via) continue; /* the service itself */
        if (!skip_path && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s", h->via->path);
        if (len >= size) break;
        bool group = h->entry->kind == SW_KIND_GROUP;
        len += (size_t)snprintf(buf + len, size - len, group ? " via group %s" : " via %s field ",
                                h->entry->id);
        skip_path = group; /* a member's place in children[] says nothing */
    }
    if (!skip_path && len < size) snprintf(buf + len, size - len, "%s", last->path);
    free(chain);
}

/* ---- edges, levels, cycles ---- */

typedef struct edgelist {
    sw_edge *v;
    size_t n, cap;
} edgelist;

static void edge_add(edgelist *l, sw_edge e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) abort();
    }
    l->v[l->n++] = e;
}

/* Where the service itself wrote the reference that starts the path to d. */
static const sw_node *written_at(const hop *q, size_t item, const dref *d)
{
    if (item == 0) return d->at;
    while (q[item].parent != 0) item = q[item].parent;
    return q[item].via->at;
}

/* Whether the path from the service to d is explicit: it starts in depends_on (the service's own
 * or an enclosing group's) and passes through groups only. Reaching itself that way is a cycle;
 * through a mere reference (config naming its own group) it is not. */
static bool explicit_path(const hop *q, size_t item, const dref *d)
{
    const dref *first = d;
    for (size_t i = item; i != 0; i = q[i].parent) {
        if (q[i].entry->kind != SW_KIND_GROUP) return false;
        first = q[i].via;
    }
    return strncmp(first->path, "lifecycle.depends_on", 20) == 0 ||
           strncmp(first->path, "lifecycle.requires", 18) == 0 ||
           strncmp(first->path, "group ", 6) == 0;
}

/* Breadth-first from service i through data, code and group entries; every service met is a
 * dependency (the first path found is the one shown). Returns the length of the search queue,
 * whose items after the first are the non-service entries reached. */
static size_t service_edges(builder *b, size_t i, hop *queue, size_t *seen_entry, size_t *seen_svc,
                            edgelist *out)
{
    const sw_entry *self = b->g->services[i];
    size_t head = 0, tail = 0;
    queue[tail++] = (hop){self, NONE, NULL};
    seen_entry[self->index] = i + 1;
    char text[1024];
    while (head < tail) {
        size_t item = head++;
        const drefs *refs = &b->direct[queue[item].entry->index];
        for (size_t k = 0; k < refs->n; k++) {
            const dref *d = &refs->v[k];
            const sw_entry *t = d->target;
            if (sw_entry_is_service(t)) {
                size_t to = b->svc_of[t->index];
                bool explicit_self = to == i && explicit_path(queue, item, d);
                if ((to == i && !explicit_self) || seen_svc[to] == i + 1) continue;
                seen_svc[to] = i + 1;
                render_why(queue, item, d, text, sizeof text);
                edge_add(out,
                         (sw_edge){i, to, sw_arena_strdup(b->a, text), written_at(queue, item, d)});
            } else if (seen_entry[t->index] != i + 1) {
                seen_entry[t->index] = i + 1;
                queue[tail++] = (hop){t, item, d};
            }
        }
    }
    return tail;
}

typedef struct reachlist {
    const sw_entry **v;
    size_t n, cap;
} reachlist;

/* Keeps the entries of one search (queue[1..tail), the service itself excluded). */
static void keep_reach(reachlist *r, const hop *queue, size_t tail)
{
    for (size_t k = 1; k < tail; k++) {
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 64;
            r->v = realloc(r->v, r->cap * sizeof *r->v);
            if (!r->v) abort();
        }
        r->v[r->n++] = queue[k].entry;
    }
}

static void build_edges(builder *b)
{
    sw_graph *g = b->g;
    size_t n = b->n_entries ? b->n_entries : 1;
    hop *queue = malloc(n * sizeof *queue);
    size_t *seen_entry = calloc(n, sizeof *seen_entry),
           *seen_svc = calloc(g->n ? g->n : 1, sizeof *seen_svc);
    if (!queue || !seen_entry || !seen_svc) abort();
    edgelist all = {0};
    reachlist reach = {0};
    g->deps = sw_arena_alloc(b->a, (g->n + 1) * sizeof *g->deps);
    g->reach_start = sw_arena_alloc(b->a, (g->n + 1) * sizeof *g->reach_start);
    for (size_t i = 0; i < g->n; i++) {
        g->deps[i] = all.n;
        g->reach_start[i] = reach.n;
        size_t tail = service_edges(b, i, queue, seen_entry, seen_svc, &all);
        keep_reach(&reach, queue, tail);
    }
    g->deps[g->n] = all.n;
    g->reach_start[g->n] = reach.n;
    g->reach = sw_arena_alloc(b->a, (reach.n ? reach.n : 1) * sizeof *g->reach);
    if (reach.n) memcpy(g->reach, reach.v, reach.n * sizeof *g->reach);
    free(reach.v);
    g->n_edges = all.n;
    g->edges = sw_arena_alloc(b->a, (all.n ? all.n : 1) * sizeof *g->edges);
    if (all.n) memcpy(g->edges, all.v, all.n * sizeof *g->edges);
    free(all.v);
    free(queue);
    free(seen_entry);
    free(seen_svc);
}

/* Kahn's algorithm over "depends on" edges; returns how many services got a level. */
static size_t compute_levels(sw_graph *g, sw_arena *a)
{
    size_t n = g->n, done = 0;
    size_t *pending = calloc(n ? n : 1, sizeof *pending),
           *queue = malloc((n ? n : 1) * sizeof *queue);
    size_t *rstart = calloc(n + 1, sizeof *rstart),
           *rev = malloc((g->n_edges ? g->n_edges : 1) * sizeof *rev);
    if (!pending || !queue || !rstart || !rev) abort();
    for (size_t e = 0; e < g->n_edges; e++) rstart[g->edges[e].to + 1]++;
    for (size_t i = 0; i < n; i++) rstart[i + 1] += rstart[i];
    size_t *fill = calloc(n ? n : 1, sizeof *fill);
    for (size_t e = 0; e < g->n_edges; e++)
        rev[rstart[g->edges[e].to] + fill[g->edges[e].to]++] = g->edges[e].from;
    g->level = sw_arena_alloc(a, (n ? n : 1) * sizeof *g->level);
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++) {
        pending[i] = g->deps[i + 1] - g->deps[i];
        if (!pending[i]) queue[tail++] = i;
    }
    while (head < tail) {
        size_t s = queue[head++];
        done++;
        if (g->level[s] + 1 > g->n_levels) g->n_levels = g->level[s] + 1;
        for (size_t k = rstart[s]; k < rstart[s + 1]; k++) {
            size_t d = rev[k];
            if (g->level[s] + 1 > g->level[d]) g->level[d] = g->level[s] + 1;
            if (--pending[d] == 0) queue[tail++] = d;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (pending[i]) g->level[i] = NONE; /* on or behind a cycle */
    free(pending);
    free(queue);
    free(rstart);
    free(rev);
    free(fill);
    return done;
}

static void report_cycle(const sw_graph *g, const size_t *path, const size_t *via, size_t len,
                         sw_diags *d)
{
    char msg[900];
    size_t n = 0;
    n += (size_t)snprintf(msg, sizeof msg, "dependency cycle: ");
    for (size_t i = 0; i < len && n < sizeof msg; i++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s -> ", g->services[path[i]]->id);
    if (n < sizeof msg)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s", g->services[path[0]]->id);
    const sw_edge *first = &g->edges[via[0]];
    const sw_entry *e = g->services[path[0]];
    /* The field slot names what the service wrote; a path through other entries goes into
     * the message, so the slot stays a field path. */
    char field[512];
    const char *through = strstr(first->why, " via ");
    snprintf(field, sizeof field, "%.*s",
             through ? (int)(through - first->why) : (int)strlen(first->why), first->why);
    if (through && n < sizeof msg) snprintf(msg + n, sizeof msg - n, " (%s%s)", field, through);
    /* The edge may come from an enclosing group's depends_on, written in the group's file. */
    sw_diags_add(d, first->at ? first->at->file : e->file, first->at ? first->at->line : e->line,
                 first->at ? first->at->col : e->col, e->id, field, "%s", msg);
}

/* Tarjan's strongly connected components of the services left without a level: comp[i] is the
 * component of service i, NONE for the others. Iterative, so a long chain cannot overflow the
 * stack. */
static void components(const sw_graph *g, size_t *comp)
{
    size_t n = g->n ? g->n : 1, next = 0, n_comp = 0, sp = 0, fp = 0;
    size_t *index = malloc(n * sizeof *index), *low = malloc(n * sizeof *low),
           *stack = malloc(n * sizeof *stack);
    size_t *frame = malloc(n * sizeof *frame), *cursor = malloc(n * sizeof *cursor);
    unsigned char *on_stack = calloc(n, 1);
    if (!index || !low || !stack || !frame || !cursor || !on_stack) abort();
    for (size_t i = 0; i < g->n; i++) index[i] = comp[i] = NONE;
    for (size_t root = 0; root < g->n; root++) {
        if (g->level[root] != NONE || index[root] != NONE) continue;
        index[root] = low[root] = next++;
        stack[sp++] = root;
        on_stack[root] = 1;
        frame[fp] = root;
        cursor[fp++] = g->deps[root];
        while (fp) {
            size_t v = frame[fp - 1];
            if (cursor[fp - 1] < g->deps[v + 1]) {
                size_t w = g->edges[cursor[fp - 1]++].to;
                if (g->level[w] != NONE) continue;
                if (index[w] == NONE) {
                    index[w] = low[w] = next++;
                    stack[sp++] = w;
                    on_stack[w] = 1;
                    frame[fp] = w;
                    cursor[fp++] = g->deps[w];
                } else if (on_stack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            fp--;
            if (fp && low[v] < low[frame[fp - 1]]) low[frame[fp - 1]] = low[v];
            if (low[v] != index[v]) continue;
            size_t w;
            do {
                w = stack[--sp];
                on_stack[w] = 0;
                comp[w] = n_comp;
            } while (w != v);
            n_comp++;
        }
    }
    free(index);
    free(low);
    free(stack);
    free(frame);
    free(cursor);
    free(on_stack);
}

/* Breadth-first from start inside its component: the edge that closes the shortest cycle back to
 * start, or NONE (a component of one service that does not depend on itself). prev[v] is the
 * edge v was reached by; seen[v] == start + 1 marks this search. */
static size_t shortest_cycle(const sw_graph *g, const size_t *comp, size_t start, size_t *prev,
                             size_t *seen, size_t *queue)
{
    size_t head = 0, tail = 0;
    queue[tail++] = start;
    seen[start] = start + 1;
    while (head < tail) {
        size_t v = queue[head++];
        for (size_t k = g->deps[v]; k < g->deps[v + 1]; k++) {
            size_t w = g->edges[k].to;
            if (w == start) return k;
            if (comp[w] != comp[start] || seen[w] == start + 1) continue;
            seen[w] = start + 1;
            prev[w] = k;
            queue[tail++] = w;
        }
    }
    return NONE;
}

/* Every service left without a level is on a cycle or depends on one. Each component of
 * services that depend on each other is reported once, with its shortest cycle through its
 * first service in load order; components are disjoint, so no cycle is missed or repeated. */
static void find_cycles(const sw_graph *g, sw_diags *d)
{
    size_t n = g->n ? g->n : 1;
    size_t *comp = malloc(n * sizeof *comp), *prev = malloc(n * sizeof *prev),
           *seen = calloc(n, sizeof *seen);
    size_t *queue = malloc(n * sizeof *queue), *path = malloc(n * sizeof *path),
           *via = malloc(n * sizeof *via);
    unsigned char *done = calloc(n, 1);
    if (!comp || !prev || !seen || !queue || !path || !via || !done) abort();
    components(g, comp);
    for (size_t start = 0; start < g->n; start++) {
        if (comp[start] == NONE || done[comp[start]]) continue;
        done[comp[start]] = 1;
        size_t k = shortest_cycle(g, comp, start, prev, seen, queue);
        if (k == NONE) continue;
        size_t len = 0;
        for (;;) {
            via[len++] = k;
            if (g->edges[k].from == start) break;
            k = prev[g->edges[k].from];
        }
        for (size_t i = 0; i < len / 2; i++) {
            size_t t = via[i];
            via[i] = via[len - 1 - i];
            via[len - 1 - i] = t;
        }
        for (size_t i = 0; i < len; i++) path[i] = g->edges[via[i]].from;
        report_cycle(g, path, via, len, d);
    }
    free(comp);
    free(prev);
    free(seen);
    free(queue);
    free(path);
    free(via);
    free(done);
}

int sw_graph_build(sw_graph *g, sw_arena *a, const sw_entry *const *entries, size_t n,
                   const sw_strmap *ids, sw_diags *diags)
{
    memset(g, 0, sizeof *g);
    builder b = {.g = g, .a = a, .ids = ids, .entries = entries, .n_entries = n};
    b.svc_of = malloc((n ? n : 1) * sizeof *b.svc_of);
    b.direct = calloc(n ? n : 1, sizeof *b.direct);
    if (!b.svc_of || !b.direct) abort();
    g->services = sw_arena_alloc(a, (n ? n : 1) * sizeof *g->services);
    for (size_t i = 0; i < n; i++) {
        b.svc_of[i] = NONE;
        if (sw_entry_is_service(entries[i])) {
            b.svc_of[i] = g->n;
            g->services[g->n++] = entries[i];
        }
        collect(&b, entries[i], &b.direct[i]);
    }
    build_edges(&b);
    free(b.direct); /* the lists themselves live in the arena */
    free(b.svc_of);
    if (compute_levels(g, a) == g->n) return 0;
    find_cycles(g, diags);
    return -1;
}

size_t sw_graph_index(const sw_graph *g, const sw_entry *e)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->services[i] == e) return i;
    return NONE;
}
