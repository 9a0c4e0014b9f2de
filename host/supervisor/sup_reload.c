/* Reload's decisions (docs/supervision.md): the app directory is loaded again beside the
 * running snapshot; any error is logged and changes nothing. Otherwise services are matched by
 * id: removed ones stop (highest start level first), added auto-start ones start, and those
 * whose content changed (registry/change.c) restart with everything that depends on them,
 * dependency order kept by the usual waves. This file reads the supervisor and returns what it
 * found (sup_reload) and plans; sw_supervisor_reload (supervisor.c) applies them, once the
 * changed services' validators, if any, have accepted (sup_validate.c). */
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "sup_internal.h"

/* ---- loading ---- */

static char *errors_text(const sw_diags *d)
{
    size_t cap = 256 * (d->n + 1), len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    for (size_t i = 0; i < d->n; i++) {
        char line[1024];
        sw_diag_format(&d->v[i], line, sizeof line);
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "\n" : "", line);
        if (len >= cap) break;
    }
    return out;
}

static int reject(sw_supervisor *s, sw_diags *d, char **errors)
{
    sw_diags_finish(d);
    for (size_t i = 0; i < d->n; i++) {
        char line[1024];
        sw_diag_format(&d->v[i], line, sizeof line);
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = line};
        sw_log_write(s->log, SW_LOG_ERROR, NULL, "reload error", &f, 1);
    }
    sw_log_field f = {.key = "errors", .type = SW_LF_INT, .i = (int64_t)d->n};
    sw_log_write(s->log, SW_LOG_ERROR, NULL, "reload rejected: nothing changed", &f, 1);
    if (errors) *errors = errors_text(d);
    sw_diags_free(d);
    return -1;
}

/* ---- matching ---- */

static void *zalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) abort();
    return p;
}

/* Each new service's old self by id, whether it changed, and the old ones left over. */
static void match(sw_supervisor *s, const sw_registry *new, bool restart_all, sup_reload *r)
{
    const sw_registry *old = s->reg;
    sw_svc **by_entry = zalloc(old->n_entries, sizeof *by_entry);
    bool *kept = zalloc(s->n, 1);
    r->old_of = zalloc(new->graph.n, sizeof *r->old_of);
    r->changed = zalloc(new->graph.n, 1);
    r->removed = zalloc(s->n, sizeof *r->removed);
    r->removed_level = zalloc(s->n, sizeof *r->removed_level);
    for (size_t i = 0; i < s->n; i++) by_entry[s->svcs[i]->entry->index] = s->svcs[i];
    for (size_t i = 0; i < new->graph.n; i++) {
        const sw_entry *oe = sw_registry_get(old, new->graph.services[i]->id);
        sw_svc *v = oe && sw_entry_is_service(oe) ? by_entry[oe->index] : NULL;
        r->old_of[i] = v;
        if (!v) {
            r->added++;
            continue;
        }
        kept[v->index] = true;
        r->changed[i] = restart_all || sw_service_changed(old, v->index, new, i);
        r->n_changed += r->changed[i];
    }
    for (size_t i = 0; i < s->n; i++) {
        if (kept[i]) continue;
        r->removed[r->n_removed] = s->svcs[i];
        r->removed_level[r->n_removed++] = old->graph.level[i];
    }
    free(by_entry);
    free(kept);
}

int sup_reload_plan(sw_supervisor *s, bool restart_all, sup_reload *r, char **errors)
{
    memset(r, 0, sizeof *r);
    if (errors) *errors = NULL;
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *new = sw_registry_load_dir(s->reg->root, &d);
    if (!new) return reject(s, &d, errors);
    sw_diags_free(&d);
    char err[256];
    sw_security_set *policies = sw_security_compile(new, err, sizeof err);
    if (!policies) {
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = err};
        sw_log_write(s->log, SW_LOG_ERROR, NULL, "reload rejected: nothing changed", &f, 1);
        if (errors) *errors = strdup(err);
        sw_registry_free(new);
        return -1;
    }
    r->reg = new;
    r->policies = policies;
    match(s, new, restart_all, r);
    return 0;
}

void sup_reload_free(sup_reload *r)
{
    free(r->old_of);
    free(r->changed);
    free(r->removed);
    free(r->removed_level);
    memset(r, 0, sizeof *r);
}

/* ---- what restarts and what starts ---- */

/* Restarts i and its dependents (new graph) by holding them like a restart by hand. */
static void restart_with_dependents(sw_supervisor *s, size_t i, bool *seen, sup_plan *p)
{
    if (seen[i]) return;
    seen[i] = true;
    sw_svc *v = s->svcs[i];
    if (sw_svc_for_good(v) &&
        sw_svc_state_of(v) == SW_SVC_FAILED) /* new code may fix what failed for good */
        sup_plan_add(p, (sup_step){.kind = SUP_FRESH, .svc = v});
    if (sw_svc_active(v) || sw_svc_waiting(v))
        sup_plan_add(p, (sup_step){.kind = SUP_HOLD, .svc = v, .grp = &s->by_hand});
    for (size_t k = 0; k < v->n_dependents; k++)
        restart_with_dependents(s, v->dependents[k], seen, p);
}

static void restarts(sw_supervisor *s, const bool *changed, sup_plan *p)
{
    bool *seen = zalloc(s->n, 1);
    for (size_t i = 0; i < s->n; i++)
        if (changed[i]) restart_with_dependents(s, i, seen, p);
    free(seen);
}

/* Auto-start services and top-level groups new to s are wanted; grouped services wanted
 * before want their new groups. */
static void wants(sw_supervisor *s, sup_plan *p)
{
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (v->wanted && v->group) sup_plan_add(p, (sup_step){.kind = SUP_WANT, .grp = v->group});
        else if (!v->wanted && !v->group && !v->run_start &&
                 v->entry->as.service.lifecycle.auto_start)
            sup_plan_add(p, (sup_step){.kind = SUP_WANT, .svc = v});
    }
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (g->parent || g->wanted || !g->entry->as.group.lifecycle.auto_start) continue;
        bool fresh = true; /* only a group that is new, so one stopped by hand stays so */
        for (size_t i = 0; i < g->n_members && fresh; i++) fresh = !g->members[i]->run_start;
        if (fresh) sup_plan_add(p, (sup_step){.kind = SUP_WANT, .grp = g});
    }
}

/* --watch: what failed after the last change starts again with this one, changed or not. */
static void release_held_for_change(sw_supervisor *s, sup_plan *p)
{
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (!v->held_for_change) continue;
        v->held_for_change = false;
        if (sw_svc_for_good(v) && sw_svc_state_of(v) == SW_SVC_FAILED)
            sup_plan_add(p, (sup_step){.kind = SUP_FRESH, .svc = v});
    }
}

void sup_reload_steps(sw_supervisor *s, const bool *changed, sup_plan *p)
{
    release_held_for_change(s, p);
    restarts(s, changed, p);
    wants(s, p);
}
