/* Reload with validation (docs/supervision.md "Validation", elfo's ValidateConfig): before a
 * reload is applied, each changed service whose new entry names a lifecycle.validate has that
 * process.lua run with (new_config, old_config) as a process of the new snapshot. The loop never
 * waits: validators end as worker messages (sup_on_validator_exit) and a timer bounds each by its
 * service's start_timeout. Once every one has answered, the reload is applied as a whole
 * (sup_reload_apply), or, if any failed or timed out, rejected as a whole: nothing changes and
 * each reason is logged. One reload is validated at a time (s->validating). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "proc.h"
#include "sup_internal.h"
#include "units.h"

typedef struct sup_check {
    const sw_entry *service;   /* the new entry */
    const sw_entry *validator; /* its lifecycle.validate, in the new snapshot */
    uint64_t pid;              /* while it runs; 0 once it answered */
    uint64_t deadline;         /* uv_hrtime past which it is too late */
    char *error;               /* why it rejects, or NULL */
} sup_check;

struct sup_validation {
    sw_supervisor *s;
    sup_reload r;
    bool restart_all;
    sup_check *checks;
    size_t n, left; /* left: still running */
    uv_timer_t timer;
};

/* ---- the checks to make ---- */

static const sw_entry *validator_of(const sup_reload *r, size_t i)
{
    if (!r->changed[i] || !r->old_of[i]) return NULL; /* a new service has no old config */
    return r->reg->graph.services[i]->as.service.lifecycle.validate.target;
}

static void set_error(sup_check *c, const char *why)
{
    free(c->error);
    c->error = strdup(why && *why ? why : "failed");
    if (!c->error) abort();
}

/* Starts check c's validator; a validator that cannot start rejects at once. */
static void launch(sup_validation *val, sup_check *c, const sw_svc *old)
{
    char err[512];
    sw_msgbuf args;
    const sw_node *configs[2] = {c->service->as.service.config,
                                 old->entry->as.service.config}; /* (new, old) */
    if (sw_msg_encode_node_values(configs, 2, &args, err, sizeof err) != 0) {
        sw_msgbuf_free(&args);
        set_error(c, err);
        return;
    }
    sw_spawn sp = {.entry = c->validator,
                   .registry = val->r.reg,
                   .args = args.data,
                   .args_len = args.len,
                   .on_exit = sup_on_validator_exit,
                   .cb_arg = val->s};
    c->pid = sw_proc_spawn(val->s->rt, &sp, err, sizeof err);
    sw_msgbuf_free(&args);
    if (!c->pid) {
        set_error(c, err);
        return;
    }
    c->deadline = uv_hrtime() + (uint64_t)c->service->as.service.lifecycle.start_timeout_ns;
    val->left++;
}

/* ---- ending ---- */

static void closed(uv_handle_t *h)
{
    sup_validation *val = h->data;
    for (size_t k = 0; k < val->n; k++) free(val->checks[k].error);
    free(val->checks);
    free(val);
}

static void log_failure(sw_supervisor *s, const sup_check *c)
{
    sw_log_field f[2] = {{.key = "validator", .type = SW_LF_STR, .s = c->validator->id},
                         {.key = "error", .type = SW_LF_STR, .s = c->error}};
    sw_log_write(s->log, SW_LOG_ERROR, c->service->id, "reload validation failed", f, 2);
}

/* Each reason, one a line: "SERVICE: validator ID: REASON". */
static char *reasons_text(const sup_validation *val)
{
    size_t cap = 1, len = 0;
    for (size_t k = 0; k < val->n; k++)
        if (val->checks[k].error)
            cap += strlen(val->checks[k].service->id) + strlen(val->checks[k].validator->id) +
                   strlen(val->checks[k].error) + 32;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    for (size_t k = 0; k < val->n; k++) {
        const sup_check *c = &val->checks[k];
        if (c->error)
            len += (size_t)snprintf(out + len, cap - len, "%s%s: validator %s: %s", len ? "\n" : "",
                                    c->service->id, c->validator->id, c->error);
    }
    return out;
}

/* Nothing changes: each reason logged, the new snapshot dropped, the outcome recorded. */
static void reject(sup_validation *val)
{
    sw_supervisor *s = val->s;
    size_t n = 0;
    for (size_t k = 0; k < val->n; k++) {
        if (!val->checks[k].error) continue;
        log_failure(s, &val->checks[k]);
        n++;
    }
    sw_log_field f = {.key = "errors", .type = SW_LF_INT, .i = (int64_t)n};
    sw_log_write(s->log, SW_LOG_ERROR, NULL, "reload rejected: nothing changed", &f, 1);
    char *text = reasons_text(val);
    sw_security_release(val->r.policies);
    sw_registry_free(val->r.reg);
    sup_reload_free(&val->r);
    sup_reload_rejected(s, text ? text : "out of memory");
    free(text);
}

/* Every validator answered (or timed out, or the host is stopping): apply or reject. Runs in
 * an entry point, which it ends with the settle. */
static void finish(sup_validation *val)
{
    sw_supervisor *s = val->s;
    s->validating = NULL;
    uv_timer_stop(&val->timer);
    bool ok = true;
    for (size_t k = 0; k < val->n; k++) ok &= val->checks[k].error == NULL;
    if (ok) {
        sw_log_field f = {.key = "validators", .type = SW_LF_INT, .i = (int64_t)val->n};
        sw_log_write(s->log, SW_LOG_INFO, NULL, "reload validated", &f, 1);
        sup_reload_apply(s, &val->r, val->restart_all); /* settles */
    } else {
        reject(val);
        sup_settle(s);
    }
    uv_close((uv_handle_t *)&val->timer, closed);
}

/* Past its deadline a validator is killed and rejects; a timer entry point. */
static void timer_fired(uv_timer_t *t)
{
    sup_validation *val = t->data;
    uint64_t now = uv_hrtime(), next = 0;
    for (size_t k = 0; k < val->n; k++) {
        sup_check *c = &val->checks[k];
        if (!c->pid) continue;
        if (now < c->deadline) {
            if (!next || c->deadline < next) next = c->deadline;
            continue;
        }
        char why[96], d[32];
        sw_format_duration(c->service->as.service.lifecycle.start_timeout_ns, d, sizeof d);
        snprintf(why, sizeof why, "not done within start_timeout (%s)", d);
        set_error(c, why);
        sw_runtime_kill(val->s->rt, c->pid); /* its exit, when it comes, is about nobody */
        c->pid = 0;
        val->left--;
    }
    if (val->left == 0) finish(val);
    else sup_arm(&val->timer, timer_fired, (int64_t)(next - now));
}

/* ---- entry points ---- */

bool sup_validate_begin(sw_supervisor *s, sup_reload *r, bool restart_all)
{
    size_t n = 0;
    for (size_t i = 0; i < r->reg->graph.n; i++) n += validator_of(r, i) != NULL;
    if (n == 0) return false;
    sup_validation *val = calloc(1, sizeof *val);
    sup_check *checks = calloc(n, sizeof *checks);
    if (!val || !checks) abort();
    *val = (sup_validation){.s = s, .r = *r, .restart_all = restart_all, .checks = checks};
    memset(r, 0, sizeof *r);
    uv_timer_init(s->loop, &val->timer);
    val->timer.data = val;
    s->validating = val;
    sw_log_field f = {.key = "validators", .type = SW_LF_INT, .i = (int64_t)n};
    sw_log_write(s->log, SW_LOG_INFO, NULL, "reload validating", &f, 1);
    for (size_t i = 0; i < val->r.reg->graph.n; i++) {
        const sw_entry *v = validator_of(&val->r, i);
        if (!v) continue;
        sup_check *c = &val->checks[val->n++];
        *c = (sup_check){.service = val->r.reg->graph.services[i], .validator = v};
        launch(val, c, val->r.old_of[i]);
    }
    /* the first deadline (or at once, when none started): always in a later entry point */
    uint64_t now = uv_hrtime(), next = 0;
    for (size_t k = 0; k < val->n; k++)
        if (val->checks[k].pid && (!next || val->checks[k].deadline < next))
            next = val->checks[k].deadline;
    sup_arm(&val->timer, timer_fired, next > now ? (int64_t)(next - now) : 0);
    return true;
}

void sup_validate_ended(sw_supervisor *s, uint64_t pid, sw_exit_kind kind, const char *error)
{
    sup_validation *val = s->validating;
    sup_check *c = NULL;
    for (size_t k = 0; val && k < val->n && !c; k++)
        if (val->checks[k].pid == pid) c = &val->checks[k];
    if (!c) return; /* timed out already, or of a reload that ended */
    if (kind != SW_EXIT_OK) set_error(c, error);
    char *trace = c->error ? strstr(c->error, "\nstack traceback:") : NULL;
    if (trace) *trace = 0; /* the reason, not where it was raised */
    c->pid = 0;
    if (--val->left == 0) finish(val);
}

void sup_validate_cancel(sw_supervisor *s, const char *reason)
{
    sup_validation *val = s->validating;
    if (!val) return;
    for (size_t k = 0; k < val->n; k++) {
        sup_check *c = &val->checks[k];
        if (!c->pid) continue;
        sw_runtime_kill(s->rt, c->pid);
        c->pid = 0;
        set_error(c, reason);
    }
    val->left = 0;
    s->validating = NULL;
    uv_timer_stop(&val->timer);
    reject(val);
    uv_close((uv_handle_t *)&val->timer, closed);
}
