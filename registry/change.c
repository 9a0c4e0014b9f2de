/* Content comparison of a service across two snapshots, for reload. */
#include "change.h"

#include <string.h>

#include "lib_tree.h"

static const sw_source *source_of(const sw_entry *e)
{
    if (e->kind == SW_KIND_PROCESS_LUA || e->kind == SW_KIND_FUNCTION_LUA ||
        e->kind == SW_KIND_TEST_LUA)
        return &e->as.process_lua.source;
    if (e->kind == SW_KIND_LIBRARY_LUA) return &e->as.library_lua.source;
    return NULL;
}

/* A file:// source is read at load: its text is compared, not its path's. */
static bool entry_equal(const sw_entry *a, const sw_entry *b)
{
    if (a->kind != b->kind || strcmp(a->id, b->id) != 0 || !sw_node_equal(a->node, b->node))
        return false;
    const sw_source *sa = source_of(a), *sb = source_of(b);
    return !sa || (sa->len == sb->len && (!sa->len || memcmp(sa->text, sb->text, sa->len) == 0) &&
                   sw_lib_tree_equal(sa->tree, sb->tree));
}

/* The reached entries, policies left out, compared in search order: equal content searches
 * the same way, so any difference in order is a difference in content somewhere. */
static const sw_entry *next_reached(const sw_graph *g, size_t i, size_t *k)
{
    while (*k < g->reach_start[i + 1]) {
        const sw_entry *e = g->reach[(*k)++];
        if (e->kind != SW_KIND_POLICY) return e;
    }
    return NULL;
}

bool sw_service_changed(const sw_registry *old, size_t old_i, const sw_registry *new, size_t new_i)
{
    if (!entry_equal(old->graph.services[old_i], new->graph.services[new_i])) return true;
    size_t ko = old->graph.reach_start[old_i], kn = new->graph.reach_start[new_i];
    for (;;) {
        const sw_entry *a = next_reached(&old->graph, old_i, &ko),
                       *b = next_reached(&new->graph, new_i, &kn);
        if (!a || !b) return a != b;
        if (!entry_equal(a, b)) return true;
    }
}
