/* Dependency extraction and the service graph. What a service depends on (DESIGN §2):
 * explicit depends_on (its own and its enclosing groups'), every string anywhere in its fields
 * that equals an entry id, and transitively what referenced non-service entries reference.
 * Groups stand for their member services; hosts and policies order nothing. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

/* Why an entry depends on a service, as a chain rendered only for the edges kept: a field path
 * of the referrer, then "via group G" or "via E field <E's own chain>". Building a chain costs
 * one small arena allocation, never a printf. */
typedef struct why why;
struct why {
    const why *prefix;        /* NULL for a root */
    const char *path;         /* root: the field path */
    const sw_entry *via;      /* a group, or a non-service entry */
    const why *tail;          /* via a non-service entry: the path inside it */
};

/* A service reached from some entry, and the chain that leads there. */
typedef struct reach {
    size_t svc;
    const why *why;
    const sw_node *at;
} reach;

typedef struct reachlist {
    reach *v;
    size_t n, cap;
} reachlist;

typedef struct builder {
    sw_graph *g;
    sw_arena *a;
    const sw_strmap *ids;
    const sw_entry *const *entries;
    size_t n_entries;
    size_t *svc_of;          /* entry index -> service index or (size_t)-1 */
    reachlist *memo;         /* per entry index, for non-service entries */
    unsigned char *state;    /* 0 not computed, 1 computing, 2 done */
} builder;

#define NONE ((size_t)-1)

static void reach_add(reachlist *l, size_t svc, const why *w, const sw_node *at)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) abort();
    }
    l->v[l->n++] = (reach){svc, w, at};
}

static const why *why_root(builder *b, const char *path)
{
    why *w = sw_arena_alloc(b->a, sizeof *w);
    w->path = path;
    return w;
}

static const why *why_via(builder *b, const why *prefix, const sw_entry *via, const why *tail)
{
    why *w = sw_arena_alloc(b->a, sizeof *w);
    w->prefix = prefix;
    w->via = via;
    w->tail = tail;
    return w;
}

static void why_render(const why *w, char *buf, size_t size, size_t *n)
{
    if (w->prefix) why_render(w->prefix, buf, size, n);
    else if (*n < size) *n += (size_t)snprintf(buf + *n, size - *n, "%s", w->path);
    if (!w->via || *n >= size) return;
    if (w->via->kind == SW_KIND_GROUP) {
        *n += (size_t)snprintf(buf + *n, size - *n, " via group %s", w->via->id);
        return;
    }
    *n += (size_t)snprintf(buf + *n, size - *n, " via %s field ", w->via->id);
    if (*n < size) why_render(w->tail, buf, size, n);
}

static const reachlist *entry_reach(builder *b, const sw_entry *e);

/* Adds what referencing `t` (written at the field `w` names) makes the referrer depend on. */
static void expand(builder *b, const sw_entry *t, const why *w, const sw_node *at, reachlist *out)
{
    switch (t->kind) {
    case SW_KIND_SERVICE:
        reach_add(out, b->svc_of[t->index], w, at);
        return;
    case SW_KIND_GROUP: {
        const why *via = why_via(b, w, t, NULL);
        for (size_t i = 0; i < t->as.group.children.n; i++) {
            const sw_entry *child = t->as.group.children.v[i].target;
            if (child) expand(b, child, via, at, out);
        }
        return;
    }
    case SW_KIND_DATA:
    case SW_KIND_PROCESS_LUA:
    case SW_KIND_LIBRARY_LUA: {
        const reachlist *r = entry_reach(b, t);
        for (size_t i = 0; i < r->n; i++) reach_add(out, r->v[i].svc, why_via(b, w, t, r->v[i].why), at);
        return;
    }
    default:
        return; /* hosts and policies: validated, not ordered */
    }
}

/* ---- scanning an entry's fields ---- */

typedef struct scan {
    builder *b;
    const sw_entry *self;
    reachlist *out;
    const char *const *skip;  /* top-level paths handled as typed references or not ordered */
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
        int w = snprintf(idx, sizeof idx, "[%zu]", index);
        key = idx;
        (void)w;
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
        if (t && t != s->self) expand(s->b, t, why_root(s->b, sw_arena_strdup(s->b->a, s->path)), n, s->out);
        return;
    }
    for (size_t i = 0; i < n->n; i++) {
        bool map = n->type == SW_NODE_MAP;
        size_t nl = path_append(s->path, sizeof s->path, len, map ? sw_node_key(n, i)->str : NULL, i);
        if (depth <= 1 && skipped(s, s->path)) continue; /* depth 1: lifecycle.depends_on and the like */
        scan_node(s, map ? sw_node_val(n, i) : n->kids[i], nl, depth + 1);
    }
    s->path[len] = 0;
}

static void expand_ref(builder *b, const sw_ref *r, const char *path, reachlist *out)
{
    if (r->target) expand(b, r->target, why_root(b, path), r->node, out);
}

static void expand_reflist(builder *b, const sw_reflist *l, const char *field, reachlist *out)
{
    for (size_t i = 0; i < l->n; i++) expand_ref(b, &l->v[i], sw_arena_printf(b->a, "%s[%zu]", field, i), out);
}

static void expand_imports(builder *b, const sw_imports *imps, reachlist *out)
{
    for (size_t i = 0; i < imps->n; i++)
        expand_ref(b, &imps->v[i].library, sw_arena_printf(b->a, "imports.%s", imps->v[i].alias), out);
}

static const char *const service_skip[] = {"process", "host", "lifecycle.depends_on", "lifecycle.requires", "lifecycle.security", NULL};
static const char *const lua_skip[] = {"source", "imports", NULL};

/* Everything entry e references, expanded to services. */
static void collect(builder *b, const sw_entry *e, reachlist *out)
{
    scan s = {.b = b, .self = e, .out = out};
    switch (e->kind) {
    case SW_KIND_SERVICE:
        s.skip = service_skip;
        expand_ref(b, &e->as.service.process, "process", out);
        expand_reflist(b, &e->as.service.lifecycle.depends_on, "lifecycle.depends_on", out);
        for (const sw_entry *g = e->parent; g; g = g->parent)
            expand_reflist(b, &g->as.group.lifecycle.depends_on,
                           sw_arena_printf(b->a, "group %s lifecycle.depends_on", g->id), out);
        break;
    case SW_KIND_PROCESS_LUA:
        s.skip = lua_skip;
        expand_imports(b, &e->as.process_lua.imports, out);
        break;
    case SW_KIND_LIBRARY_LUA:
        s.skip = lua_skip;
        expand_imports(b, &e->as.library_lua.imports, out);
        break;
    default:
        break;
    }
    scan_node(&s, e->node, 0, 0);
}

/* Memoized; a reference loop among non-service entries is harmless and simply stops. */
static const reachlist *entry_reach(builder *b, const sw_entry *e)
{
    static const reachlist empty = {0};
    if (b->state[e->index] == 1) return &empty;
    if (b->state[e->index] == 2) return &b->memo[e->index];
    b->state[e->index] = 1;
    reachlist l = {0};
    collect(b, e, &l);
    b->memo[e->index] = l;
    b->state[e->index] = 2;
    return &b->memo[e->index];
}

/* ---- edges, levels, cycles ---- */

static void build_edges(builder *b)
{
    sw_graph *g = b->g;
    size_t *seen = calloc(g->n ? g->n : 1, sizeof *seen);
    reachlist all = {0};
    g->deps = sw_arena_alloc(b->a, (g->n + 1) * sizeof *g->deps);
    for (size_t i = 0; i < g->n; i++) {
        g->deps[i] = all.n;
        reachlist mine = {0};
        collect(b, g->services[i], &mine);
        for (size_t k = 0; k < mine.n; k++) {
            size_t to = mine.v[k].svc;
            const why *root = mine.v[k].why;
            while (root->prefix) root = root->prefix;
            bool explicit_self = to == i && strncmp(root->path, "lifecycle.depends_on", 20) == 0;
            if ((to == i && !explicit_self) || seen[to] == i + 1) continue;
            seen[to] = i + 1;
            reach_add(&all, to, mine.v[k].why, mine.v[k].at);
        }
        free(mine.v);
    }
    g->deps[g->n] = all.n;
    g->n_edges = all.n;
    g->edges = sw_arena_alloc(b->a, (all.n ? all.n : 1) * sizeof *g->edges);
    char text[1024];
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = g->deps[i]; k < g->deps[i + 1]; k++) {
            size_t len = 0;
            why_render(all.v[k].why, text, sizeof text, &len);
            g->edges[k] = (sw_edge){i, all.v[k].svc, sw_arena_strdup(b->a, text), all.v[k].at};
        }
    free(all.v);
    free(seen);
}

/* Kahn's algorithm over "depends on" edges; returns how many services got a level. */
static size_t compute_levels(sw_graph *g, sw_arena *a)
{
    size_t n = g->n, done = 0;
    size_t *pending = calloc(n ? n : 1, sizeof *pending), *queue = malloc((n ? n : 1) * sizeof *queue);
    size_t *rstart = calloc(n + 1, sizeof *rstart), *rev = malloc((g->n_edges ? g->n_edges : 1) * sizeof *rev);
    if (!pending || !queue || !rstart || !rev) abort();
    for (size_t e = 0; e < g->n_edges; e++) rstart[g->edges[e].to + 1]++;
    for (size_t i = 0; i < n; i++) rstart[i + 1] += rstart[i];
    size_t *fill = calloc(n ? n : 1, sizeof *fill);
    for (size_t e = 0; e < g->n_edges; e++) rev[rstart[g->edges[e].to] + fill[g->edges[e].to]++] = g->edges[e].from;
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
    free(pending); free(queue); free(rstart); free(rev); free(fill);
    return done;
}

static void report_cycle(const sw_graph *g, const size_t *path, const size_t *via, size_t len, sw_diags *d)
{
    char msg[900];
    size_t n = 0;
    n += (size_t)snprintf(msg, sizeof msg, "dependency cycle: ");
    for (size_t i = 0; i < len && n < sizeof msg; i++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s -> ", g->services[path[i]]->id);
    if (n < sizeof msg) snprintf(msg + n, sizeof msg - n, "%s", g->services[path[0]]->id);
    const sw_edge *first = &g->edges[via[0]];
    const sw_entry *e = g->services[path[0]];
    sw_diags_add(d, e->file, first->at ? first->at->line : e->line, first->at ? first->at->col : e->col, e->id, first->why, "%s", msg);
}

/* Every service left without a level is on a cycle or behind one. Walking dependency edges that
 * stay among them must revisit a service: that closes a cycle. Each cycle is reported once. */
static void find_cycles(const sw_graph *g, sw_diags *d)
{
    size_t n = g->n;
    unsigned char *mark = calloc(n ? n : 1, 1); /* 0 unvisited, 1 on current walk, 2 finished */
    size_t *path = malloc((n ? n : 1) * sizeof *path), *via = malloc((n ? n : 1) * sizeof *via);
    size_t *pos = malloc((n ? n : 1) * sizeof *pos);
    for (size_t start = 0; start < n; start++) {
        if (g->level[start] != NONE || mark[start]) continue;
        size_t len = 0, cur = start;
        while (cur != NONE && mark[cur] == 0) {
            mark[cur] = 1;
            pos[cur] = len;
            path[len] = cur;
            size_t next = NONE;
            for (size_t k = g->deps[cur]; k < g->deps[cur + 1]; k++) {
                size_t t = g->edges[k].to;
                if (g->level[t] == NONE && mark[t] != 2) { next = t; via[len] = k; break; }
            }
            len++;
            cur = next;
        }
        if (cur != NONE && mark[cur] == 1) report_cycle(g, path + pos[cur], via + pos[cur], len - pos[cur], d);
        for (size_t i = 0; i < len; i++) mark[path[i]] = 2;
    }
    free(mark); free(path); free(via); free(pos);
}

int sw_graph_build(sw_graph *g, sw_arena *a, const sw_entry *const *entries, size_t n, const sw_strmap *ids, sw_diags *diags)
{
    memset(g, 0, sizeof *g);
    builder b = {.g = g, .a = a, .ids = ids, .entries = entries, .n_entries = n};
    b.svc_of = malloc((n ? n : 1) * sizeof *b.svc_of);
    b.memo = calloc(n ? n : 1, sizeof *b.memo);
    b.state = calloc(n ? n : 1, 1);
    g->services = sw_arena_alloc(a, (n ? n : 1) * sizeof *g->services);
    for (size_t i = 0; i < n; i++) {
        b.svc_of[i] = NONE;
        if (entries[i]->kind == SW_KIND_SERVICE) {
            b.svc_of[i] = g->n;
            g->services[g->n++] = entries[i];
        }
    }
    build_edges(&b);
    for (size_t i = 0; i < n; i++) free(b.memo[i].v);
    free(b.memo);
    free(b.state);
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
