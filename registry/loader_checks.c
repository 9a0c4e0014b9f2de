/* The loader's checks that need every entry: references resolved to entries of the kinds
 * their fields accept (with "did you mean" for an unknown id), and service.group trees
 * without loops or a child in two groups. The dependency graph is graph.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "loader_internal.h"

static void ref_error(loader *L, const sw_pending_ref *pr, const char *fmt, const char *a1,
                      const char *a2)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, a1, a2 ? a2 : "");
    const sw_entry *owner = sw_strmap_get(&L->r->ids, pr->entry_id);
    sw_loader_error_at(L, owner ? owner->file : NULL, pr->ref->node, pr->entry_id, pr->path, msg);
}

/* A likely intended id among the entries of the kinds the field accepts: the same name in
 * another namespace (a relative reference resolved in the wrong one), else the closest
 * spelling. Runs only on an error, so scanning all ids is fine. */
static const char *suggest_id(const sw_registry *r, const char *id, unsigned kinds)
{
    const char *name = strchr(id, ':') + 1;
    const char **ids = malloc((r->n_entries ? r->n_entries : 1) * sizeof *ids);
    if (!ids) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->n_entries; i++) {
        const sw_entry *e = r->entries[i];
        if (!(kinds & SW_KINDBIT(e->kind))) continue;
        if (strcmp(e->name, name) == 0) {
            free(ids);
            return e->id;
        }
        ids[n++] = e->id;
    }
    const char *hint = sw_suggest(id, ids, n);
    free(ids);
    return hint;
}

static void kinds_wanted(unsigned kinds, char *buf, size_t size)
{
    buf[0] = 0;
    for (int k = 0; k < SW_KIND__COUNT; k++) {
        if (!(kinds & SW_KINDBIT(k))) continue;
        if (buf[0]) strncat(buf, " or ", size - strlen(buf) - 1);
        strncat(buf, sw_kind_name(k), size - strlen(buf) - 1);
    }
}

static void collect_policy_groups(loader *L, sw_strmap *groups)
{
    for (size_t i = 0; i < L->r->n_entries; i++) {
        const sw_entry *e = L->r->entries[i];
        if (e->kind != SW_KIND_POLICY) continue;
        for (size_t g = 0; g < e->as.policy.groups.n; g++)
            sw_strmap_put(groups, e->as.policy.groups.v[g], (void *)e);
    }
}

void sw_loader_resolve_refs(loader *L)
{
    sw_strmap groups;
    sw_strmap_init(&groups);
    collect_policy_groups(L, &groups);
    for (size_t i = 0; i < L->parse.n_pending; i++) {
        const sw_pending_ref *pr = &L->parse.pending[i];
        if (pr->group) {
            if (!sw_strmap_get(&groups, pr->ref->id))
                ref_error(L, pr, "no policy joins group %s", pr->ref->id, NULL);
            continue;
        }
        const sw_entry *t = sw_strmap_get(&L->r->ids, pr->ref->id);
        if (!t) {
            const char *hint = suggest_id(L->r, pr->ref->id, pr->kinds);
            ref_error(L, pr, hint ? "%s names no entry (did you mean %s?)" : "%s names no entry%s",
                      pr->ref->id, hint);
            continue;
        }
        if (t->kind == SW_KIND__COUNT)
            continue; /* an entry without a valid kind: already reported */
        if (!(pr->kinds & SW_KINDBIT(t->kind))) {
            char want[160];
            kinds_wanted(pr->kinds, want, sizeof want);
            char msg[400];
            snprintf(msg, sizeof msg, "%%s is a %s; expected a %s", sw_kind_name(t->kind), want);
            ref_error(L, pr, msg, t->id, NULL);
            continue;
        }
        pr->ref->target = t;
    }
    sw_strmap_free(&groups);
}

/* True, with "group contains itself: g -> child -> ... -> g" in msg, when making g the parent of
 * child would close a loop: child is g itself or one of g's enclosing groups. */
static bool group_loop(const sw_entry *g, const sw_entry *child, char *msg, size_t size)
{
    size_t n = 0;
    const sw_entry *up = g;
    while (up && up != child) {
        up = up->parent;
        n++;
    }
    if (!up) return false;
    /* child is g's n-th ancestor; from child the loop goes back down g's ancestors to g. */
    size_t len = (size_t)snprintf(msg, size, "group contains itself: %s", g->id);
    for (size_t depth = n; depth >= 1 && len < size; depth--) {
        up = g;
        for (size_t k = 0; k < depth; k++) up = up->parent;
        len += (size_t)snprintf(msg + len, size - len, " -> %s", up->id);
    }
    if (len < size) snprintf(msg + len, size - len, " -> %s", g->id);
    return true;
}

/* The node of lifecycle.KEY in entry e as written (for an error's position), else e's. */
static const sw_node *lifecycle_node(const sw_entry *e, const char *key)
{
    const sw_node *lc = e->node ? sw_node_get(e->node, "lifecycle") : NULL;
    const sw_node *n = lc && lc->type == SW_NODE_MAP ? sw_node_get(lc, key) : NULL;
    return n ? n : e->node;
}

/* Liveness (docs/supervision.md "Watchdog", "Health checks") is a service's: a group has no
 * process to ping or check; `ready: health` needs a check to pass. */
void sw_loader_check_liveness(loader *L)
{
    for (size_t i = 0; i < L->r->n_entries; i++) {
        const sw_entry *e = L->r->entries[i];
        if (e->kind == SW_KIND_GROUP) {
            const sw_lifecycle *lc = &e->as.group.lifecycle;
            if (lc->watchdog_ns)
                sw_loader_error_at(
                    L, e->file, lifecycle_node(e, "watchdog"), e->id, "lifecycle.watchdog",
                    "a group has no process to watch: give watchdog to its services");
            if (lc->health.check.id)
                sw_loader_error_at(L, e->file, lifecycle_node(e, "health"), e->id,
                                   "lifecycle.health",
                                   "a group has no process to check: give health to its services");
            if (lc->ready == SW_READY_HEALTH)
                sw_loader_error_at(L, e->file, lifecycle_node(e, "ready"), e->id, "lifecycle.ready",
                                   "a group has no readiness of its own");
        } else if (e->kind == SW_KIND_SERVICE) {
            const sw_lifecycle *lc = &e->as.service.lifecycle;
            if (lc->ready == SW_READY_HEALTH && !lc->health.check.id)
                sw_loader_error_at(L, e->file, lifecycle_node(e, "ready"), e->id, "lifecycle.ready",
                                   "ready: health needs lifecycle.health with a check");
        }
    }
}

/* A service or group belongs to at most one group; a group may not contain itself. Parents are
 * set only when neither applies, so parent chains always end (the graph relies on it). */
void sw_loader_check_groups(loader *L)
{
    for (size_t i = 0; i < L->r->n_entries; i++) {
        sw_entry *g = L->r->entries[i];
        if (g->kind != SW_KIND_GROUP) continue;
        const sw_ref *validate = &g->as.group.lifecycle.validate;
        if (validate->id) /* one schema serves both kinds: reload validates services only */
            sw_loader_error_at(L, g->file, validate->node, g->id, "lifecycle.validate",
                               "a group has no config to validate: give validate to its services");
        for (size_t c = 0; c < g->as.group.children.n; c++) {
            const sw_ref *ref = &g->as.group.children.v[c];
            sw_entry *child = (sw_entry *)ref->target;
            if (!child) continue;
            char path[48], msg[512];
            snprintf(path, sizeof path, "children[%zu]", c);
            if (group_loop(g, child, msg, sizeof msg)) {
                sw_loader_error_at(L, g->file, ref->node, g->id, path, msg);
                continue;
            }
            if (child->parent) {
                snprintf(msg, sizeof msg, "%s already belongs to group %s (%s:%u:%u)", child->id,
                         child->parent->id, child->parent->file, child->parent->line,
                         child->parent->col);
                sw_loader_error_at(L, g->file, ref->node, g->id, path, msg);
                continue;
            }
            child->parent = g;
        }
    }
}
