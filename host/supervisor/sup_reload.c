/* Reload (DESIGN §4): the app directory is loaded again beside the running snapshot; any
 * error is logged and changes nothing. Otherwise services are matched by id: removed ones
 * stop (highest start level first), added auto-start ones start, and those whose content
 * changed (registry/change.c) restart with everything that depends on them, dependency
 * order kept by the usual waves. Processes of unchanged services keep running on the
 * snapshot they started with; the policies they are checked against are swapped at once. */
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "sup_internal.h"

#define RETIRED ((size_t)-1)

/* ---- removed services ---- */

static void retire(sw_supervisor *s, sw_svc *v, size_t level)
{
    sw_svc **r = realloc(s->retired, (s->n_retired + 1) * sizeof *r);
    if (!r) abort();
    s->retired = r;
    s->retired[s->n_retired++] = v;
    sup_drop_standby(v);
    v->index = RETIRED;
    v->retired_level = level;
    v->wanted = false;
    v->final = true; /* an end of its own is not restarted either */
    v->held_by = NULL;
    v->group = NULL;
    free(v->dependents);
    v->dependents = NULL;
    v->n_dependents = 0;
}

/* Frees retired services that are down; stops the highest level still active. */
void sup_reap_retired(sw_supervisor *s)
{
    size_t kept = 0, top = 0;
    bool any_active = false;
    for (size_t i = 0; i < s->n_retired; i++) {
        sw_svc *v = s->retired[i];
        if (v->waiting || v->awaiting_standby) sup_begin_stop(v); /* cancels the restart to come */
        if (!sw_svc_active(v)) {
            sup_svc_free(v);
            continue;
        }
        if (!any_active || v->retired_level > top) top = v->retired_level;
        any_active = true;
        s->retired[kept++] = v;
    }
    s->n_retired = kept;
    for (size_t i = 0; i < s->n_retired; i++)
        if (s->retired[i]->retired_level == top) sup_begin_stop(s->retired[i]);
}

/* ---- matching ---- */

typedef struct diff {
    size_t added, removed, changed;
} diff;

/* Restarts i and its dependents (new graph) by holding them like a restart by hand. */
static void restart_with_dependents(sw_supervisor *s, size_t i, bool *seen)
{
    if (seen[i]) return;
    seen[i] = true;
    sw_svc *v = s->svcs[i];
    if (v->final && v->state == SW_SVC_FAILED) { /* new code may fix what failed for good */
        v->final = false;
        v->attempt = 0;
    }
    if (sw_svc_active(v) || v->waiting) v->held_by = &s->by_hand;
    for (size_t k = 0; k < v->n_dependents; k++) restart_with_dependents(s, v->dependents[k], seen);
}

/* The new service list: old services matched by id keep their state and timers. */
static void match(sw_supervisor *s, const sw_registry *old, bool restart_all, diff *d, bool *changed)
{
    const sw_registry *new = s->reg;
    sw_svc **old_svcs = s->svcs;
    size_t old_n = s->n;
    sw_svc **by_entry = calloc(old->n_entries ? old->n_entries : 1, sizeof *by_entry);
    bool *kept = calloc(old_n ? old_n : 1, 1);
    sw_svc **svcs = calloc(new->graph.n ? new->graph.n : 1, sizeof *svcs);
    if (!by_entry || !kept || !svcs) abort();
    for (size_t i = 0; i < old_n; i++) by_entry[old_svcs[i]->entry->index] = old_svcs[i];
    for (size_t i = 0; i < new->graph.n; i++) {
        const sw_entry *oe = sw_registry_get(old, new->graph.services[i]->id);
        sw_svc *v = oe && oe->kind == SW_KIND_SERVICE ? by_entry[oe->index] : NULL;
        if (!v) {
            svcs[i] = sup_svc_new(s, i);
            d->added++;
            continue;
        }
        kept[v->index] = true;
        changed[i] = restart_all || sw_service_changed(old, v->index, new, i);
        d->changed += changed[i];
        v->entry = new->graph.services[i];
        sw_registry_free(v->reg);
        v->reg = sw_registry_retain(new);
        v->index = i;
        v->group = NULL;
        v->pos = 0;
        if (v->held_by != &s->by_hand) v->held_by = NULL; /* the old groups are gone */
        svcs[i] = v;
    }
    for (size_t i = 0; i < old_n; i++) {
        if (kept[i]) continue;
        retire(s, old_svcs[i], old->graph.level[i]);
        d->removed++;
    }
    free(by_entry);
    free(kept);
    free(old_svcs);
    s->svcs = svcs;
    s->n = new->graph.n;
}

static void want_again(sw_supervisor *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sw_svc *v = s->svcs[i];
        if (v->wanted && v->group) sup_want_group(s, v->group);
        else if (!v->wanted && !v->group && !v->run_start && v->entry->as.service.lifecycle.auto_start) sup_want(s, i);
    }
    for (size_t k = 0; k < s->n_grps; k++) {
        sw_grp *g = s->grps[k];
        if (!g->parent && !g->wanted && g->entry->as.group.lifecycle.auto_start) {
            bool fresh = true; /* only a group that is new, so one stopped by hand stays so */
            for (size_t i = 0; i < g->n_members && fresh; i++) fresh = !g->members[i]->run_start;
            if (fresh) sup_want_group(s, g);
        }
    }
}

/* ---- the reload ---- */

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

int sw_supervisor_reload(sw_supervisor *s, bool restart_all, char **errors)
{
    if (errors) *errors = NULL;
    if (s->shutting_down) {
        if (errors) *errors = strdup("the host is shutting down");
        return -1;
    }
    if (s->notify) s->notify(s->notify_arg, "RELOADING=1");
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *new = sw_registry_load_dir(s->reg->root, &d);
    if (!new) {
        int rc = reject(s, &d, errors);
        if (s->notify && s->ready_sent) s->notify(s->notify_arg, "READY=1");
        return rc;
    }
    sw_diags_free(&d);
    char err[256];
    sw_security_set *policies = sw_security_compile(new, err, sizeof err);
    if (!policies) {
        sw_log_field f = {.key = "error", .type = SW_LF_STR, .s = err};
        sw_log_write(s->log, SW_LOG_ERROR, NULL, "reload rejected: nothing changed", &f, 1);
        if (errors) *errors = strdup(err);
        sw_registry_free(new);
        if (s->notify && s->ready_sent) s->notify(s->notify_arg, "READY=1");
        return -1;
    }
    const sw_registry *old = s->reg;
    s->reg = new; /* our reference */
    bool *changed = calloc(new->graph.n ? new->graph.n : 1, 1), *seen = calloc(new->graph.n ? new->graph.n : 1, 1);
    if (!changed || !seen) abort();
    diff df = {0};
    match(s, old, restart_all, &df, changed);
    sup_groups_close(s);
    sup_groups_free(s);
    sup_groups_build(s);
    sup_build_dependents(s);
    sw_runtime_set_registry(s->rt, new);
    sw_runtime_set_security(s->rt, policies); /* running processes see it at their next check */
    for (size_t i = 0; i < s->n; i++)
        if (changed[i]) restart_with_dependents(s, i, seen);
    free(changed);
    free(seen);
    want_again(s);
    sw_log_field f[4] = {{.key = "added", .type = SW_LF_INT, .i = (int64_t)df.added},
                         {.key = "removed", .type = SW_LF_INT, .i = (int64_t)df.removed},
                         {.key = "changed", .type = SW_LF_INT, .i = (int64_t)df.changed},
                         {.key = "restart_all", .type = SW_LF_BOOL, .b = restart_all}};
    sw_log_write(s->log, SW_LOG_INFO, NULL, "reloaded", f, 4);
    sw_registry_free(old);
    sup_continue_stops(s);
    sup_reconcile(s);
    if (s->notify && s->ready_sent) s->notify(s->notify_arg, "READY=1"); /* else when it settles */
    return 0;
}
