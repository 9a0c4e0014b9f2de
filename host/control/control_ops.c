/* Control requests applied to the supervisor (see control_ops.h). */
#include "control_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_status.h"

json_t *sw_ctl_error_reply(const char *msg)
{
    return json_pack("{s:b, s:o}", "ok", 0, "error", sw_json_str(msg));
}

/* {"ok":true,"message":msg} */
static json_t *ok_reply(const char *msg)
{
    return json_pack("{s:b, s:o}", "ok", 1, "message", sw_json_str(msg));
}

static void mark_dependents(sw_supervisor *s, size_t i, bool *set)
{
    if (set[i]) return;
    set[i] = true;
    for (size_t k = 0; k < s->svcs[i]->n_dependents; k++)
        mark_dependents(s, s->svcs[i]->dependents[k], set);
}

/* The k-th service of the operation now, or NULL if a reload removed it. */
static sw_svc *member(sw_ctl_op *op, sw_supervisor *s, size_t k)
{
    if (op->at[k] < s->n && strcmp(s->svcs[op->at[k]]->entry->id, op->ids[k]) == 0)
        return s->svcs[op->at[k]];
    sw_svc *v = sw_supervisor_find(s, op->ids[k]);
    if (v) op->at[k] = v->index;
    return v;
}

static bool done(sw_ctl_op *op, sw_supervisor *s)
{
    for (size_t k = 0; k < op->n_ids; k++) {
        const sw_svc *v = member(op, s, k);
        if (v && (op->req.cmd == SW_CTL_STOP ? sw_svc_active(v) : !sw_svc_settled(v))) return false;
    }
    return true;
}

/* Whether the operation reached what it asked for (v: the named service, NULL if removed). */
static bool succeeded(const sw_ctl_op *op, const sw_svc *v)
{
    if (!v) return op->req.cmd == SW_CTL_STOP;
    if (op->req.cmd == SW_CTL_STOP) return !sw_svc_active(v);
    sw_svc_state st = sw_svc_state_of(v);
    return st == SW_SVC_RUNNING ||
           (st == SW_SVC_STOPPED && v->reason && strcmp(v->reason, "returned") == 0);
}

/* A group's outcome: how many of its services reached what was asked. */
static void group_text(sw_ctl_op *op, sw_supervisor *s, bool in_time, char *out, size_t size)
{
    size_t ok = 0;
    for (size_t k = 0; k < op->n_named; k++) ok += succeeded(op, member(op, s, k));
    const char *what = op->req.cmd == SW_CTL_STOP      ? "stopped"
                       : op->req.cmd == SW_CTL_RESTART ? "restarted"
                                                       : "running";
    snprintf(out, size, "group %s: %zu of %zu service%s %s%s", op->req.id, ok, op->n_named,
             op->n_named == 1 ? "" : "s", what, in_time ? "" : " (timed out)");
}

static void outcome_text(const sw_ctl_op *op, const sw_svc *v, bool in_time, char *out, size_t size)
{
    const char *id = op->ids[0];
    if (!v) {
        snprintf(out, size, "%s was removed by a reload", id);
        return;
    }
    const char *state = sw_svc_state_name(sw_svc_state_of(v));
    if (!in_time) {
        snprintf(out, size, "%s is still %s after %gs", id, state, op->req.timeout);
    } else if (op->req.cmd == SW_CTL_STOP) {
        if (op->n_ids > 1)
            snprintf(out, size, "%s %s, with %zu dependent%s", id, state, op->n_ids - 1,
                     op->n_ids == 2 ? "" : "s");
        else snprintf(out, size, "%s %s", id, state);
    } else if (succeeded(op, v)) {
        snprintf(out, size, "%s %s%s", id, op->req.cmd == SW_CTL_RESTART ? "restarted: " : "",
                 state);
    } else {
        snprintf(out, size, "%s %s%s%s%s", id, state, v->reason ? ": " : "",
                 v->reason ? v->reason : "", sw_svc_waiting(v) ? " (a retry is scheduled)" : "");
    }
}

static json_t *op_reply(sw_ctl_op *op, sw_supervisor *s, bool in_time)
{
    bool ok = in_time;
    for (size_t k = 0; k < op->n_named; k++) ok = ok && succeeded(op, member(op, s, k));
    char text[1024];
    if (op->group) group_text(op, s, in_time, text, sizeof text);
    else outcome_text(op, member(op, s, 0), in_time, text, sizeof text);
    json_t *list = json_array();
    int64_t wall = sw_ctl_wall_ns();
    for (size_t k = 0; k < op->n_ids && list; k++) {
        const sw_svc *m = member(op, s, k);
        if (m && json_array_append_new(list, sw_ctl_service_json(m, wall, uv_hrtime())) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return json_pack("{s:b, s:o, s:s, s:o}", "ok", (int)ok, ok ? "message" : "error",
                     sw_json_str(text), "cmd", sw_ctl_cmd_name(op->req.cmd), "services", list);
}

/* The reply to a reload: ok, or each error (one a line in errors). */
static json_t *reload_reply(bool ok, bool all, const char *errors)
{
    if (ok) return ok_reply(all ? "reloaded; every service restarts" : "reloaded");
    json_t *list = json_array();
    const char *line = errors;
    while (line && *line && list) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len && json_array_append_new(list, sw_json_strn(line, len)) != 0) {
            json_decref(list);
            list = NULL;
        }
        line = end ? end + 1 : NULL;
    }
    return json_pack("{s:b, s:s, s:o}", "ok", 0, "error", "reload failed: nothing changed",
                     "errors", list);
}

/* A reload answers at once, unless validators run: then it waits (sw_ctl_op_poll) for the
 * supervisor to apply or reject it. true: answered. */
static bool reload(sw_ctl_op *op, sw_supervisor *s, json_t **reply)
{
    /* RELOADING=1 / READY=1 around the reload; the notifier drops repeats, so the supervisor
     * may send them too. READY=1 only if the host was ready: else it comes when it is. */
    bool busy = s->validating != NULL; /* refused: the reload under way tells READY=1 */
    if (s->notify && !busy) s->notify(s->notify_arg, "RELOADING=1");
    op->reloads = s->reloads;
    char *errors = NULL;
    int rc = sw_supervisor_reload(s, op->req.all, &errors);
    if (rc == 1) { /* validating: the supervisor says READY=1 when it ends */
        op->deadline = uv_hrtime() + (uint64_t)(op->req.timeout * 1e9);
        return sw_ctl_op_poll(op, s, reply);
    }
    if (s->notify && s->ready_sent && !busy) s->notify(s->notify_arg, "READY=1");
    *reply = reload_reply(rc == 0, op->req.all, errors);
    free(errors);
    return true;
}

static bool reload_poll(sw_ctl_op *op, sw_supervisor *s, json_t **reply)
{
    if (s->reloads > op->reloads) {
        *reply = reload_reply(s->reload_ok, op->req.all, s->reload_errors);
        return true;
    }
    if (uv_hrtime() < op->deadline) return false;
    char text[128];
    snprintf(text, sizeof text, "the reload is still being validated after %gs", op->req.timeout);
    *reply = sw_ctl_error_reply(text);
    return true;
}

static json_t *unknown_service(const char *id, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, "no %s \"%.500s\"", what, id);
    return json_pack("{s:b, s:b, s:o}", "ok", 0, "unknown", 1, "error", sw_json_str(msg));
}

static void log_request(sw_supervisor *s, const sw_ctl_request *r)
{
    sw_log_field f[2] = {{.key = "cmd", .type = SW_LF_STR, .s = sw_ctl_cmd_name(r->cmd)}};
    size_t n = 1;
    if (r->id) f[n++] = (sw_log_field){.key = "id", .type = SW_LF_STR, .s = r->id};
    bool reads = r->cmd == SW_CTL_STATUS || r->cmd == SW_CTL_LOGS;
    sw_log_write(s->log, reads ? SW_LOG_DEBUG : SW_LOG_INFO, NULL, "control request", f, n);
}

static int remember_one(sw_ctl_op *op, sw_supervisor *s, size_t i)
{
    op->at[op->n_ids] = i;
    op->ids[op->n_ids] = strdup(s->svcs[i]->entry->id);
    return op->ids[op->n_ids++] ? 0 : -1;
}

/* Records by id the named services (named[i]) first, then the others of set. */
static int remember(sw_ctl_op *op, sw_supervisor *s, const bool *named, const bool *set)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) n += set[i] || named[i];
    op->ids = calloc(n, sizeof *op->ids);
    op->at = calloc(n, sizeof *op->at);
    if (!op->ids || !op->at) return -1;
    for (size_t i = 0; i < s->n; i++)
        if (named[i] && remember_one(op, s, i) != 0) return -1;
    op->n_named = op->n_ids;
    for (size_t i = 0; i < s->n; i++)
        if (set[i] && !named[i] && remember_one(op, s, i) != 0) return -1;
    return 0;
}

/* start, stop or restart of the services in named (one service, or a group's members): ask
 * the supervisor for each, then wait for the outcome. true: answered. */
static bool act(sw_ctl_op *op, sw_supervisor *s, const bool *named, json_t **reply)
{
    bool *set = calloc(s->n, sizeof *set);
    for (size_t i = 0; set && i < s->n; i++)
        if (named[i] && op->req.cmd != SW_CTL_START)
            mark_dependents(s, i, set); /* stop and restart reach the dependents */
    int rc = set ? remember(op, s, named, set) : -1;
    free(set);
    if (rc != 0) {
        *reply = sw_ctl_error_reply("out of memory");
        return true;
    }
    for (size_t k = 0; k < op->n_named; k++) {
        if (op->req.cmd == SW_CTL_START) sw_supervisor_start_one(s, op->ids[k]);
        else if (op->req.cmd == SW_CTL_STOP) sw_supervisor_stop_one(s, op->ids[k]);
        else sw_supervisor_restart_one(s, op->ids[k]);
    }
    op->deadline = uv_hrtime() + (uint64_t)(op->req.timeout * 1e9);
    return sw_ctl_op_poll(op, s, reply);
}

/* The services a start, stop or restart names: the service id, or a service.group's members.
 * NULL (reply set) when the id names neither, or memory runs out. */
static bool *named_services(sw_ctl_op *op, sw_supervisor *s, sw_svc *v, json_t **reply)
{
    bool *named = calloc(s->n ? s->n : 1, sizeof *named);
    if (!named) *reply = sw_ctl_error_reply("out of memory");
    else if (v) named[v->index] = true;
    else if (sw_supervisor_group_members(s, op->req.id, named) > 0) op->group = true;
    else {
        free(named);
        named = NULL;
        *reply = unknown_service(op->req.id, "service or group");
    }
    return named;
}

sw_ctl_begun sw_ctl_op_begin(sw_ctl_op *op, sw_supervisor *s, const char *line, size_t len,
                             json_t **reply)
{
    memset(op, 0, sizeof *op);
    *reply = NULL;
    char err[256];
    if (sw_ctl_request_parse(line, len, &op->req, err, sizeof err) != 0) {
        *reply = sw_ctl_error_reply(err);
        return SW_CTL_ANSWERED;
    }
    log_request(s, &op->req);
    sw_svc *v = op->req.id ? sw_supervisor_find(s, op->req.id) : NULL;
    bool acts = op->req.cmd == SW_CTL_START || op->req.cmd == SW_CTL_STOP ||
                op->req.cmd == SW_CTL_RESTART; /* these also take a group */
    if (op->req.id && !v && !acts) {
        *reply = unknown_service(op->req.id, "service");
        return SW_CTL_ANSWERED;
    }
    switch (op->req.cmd) {
    case SW_CTL_STATUS:
        if (!v) return SW_CTL_STATUS_ALL;
        *reply = sw_ctl_status_one(s, v);
        return SW_CTL_ANSWERED;
    case SW_CTL_LOGS: return SW_CTL_LOGS_READ;
    case SW_CTL_RELOAD:
        if (s->shutting_down) *reply = sw_ctl_error_reply("the host is shutting down");
        else if (!reload(op, s, reply)) return SW_CTL_WAITING;
        return SW_CTL_ANSWERED;
    default:
        if (s->shutting_down && op->req.cmd != SW_CTL_STOP) {
            *reply = sw_ctl_error_reply("the host is shutting down");
            return SW_CTL_ANSWERED;
        }
        bool *named = named_services(op, s, v, reply);
        if (!named) return SW_CTL_ANSWERED;
        bool answered = act(op, s, named, reply);
        free(named);
        return answered ? SW_CTL_ANSWERED : SW_CTL_WAITING;
    }
}

bool sw_ctl_op_poll(sw_ctl_op *op, sw_supervisor *s, json_t **reply)
{
    *reply = NULL;
    if (op->req.cmd == SW_CTL_RELOAD) return reload_poll(op, s, reply);
    bool finished = done(op, s);
    if (!finished && op->req.timeout == 0) { /* asked not to wait */
        *reply = ok_reply("requested");
        return true;
    }
    if (!finished && uv_hrtime() < op->deadline) return false;
    *reply = op_reply(op, s, finished);
    return true;
}

void sw_ctl_op_free(sw_ctl_op *op)
{
    sw_ctl_request_free(&op->req);
    for (size_t k = 0; k < op->n_ids; k++) free(op->ids[k]);
    free(op->ids);
    free(op->at);
    op->ids = NULL;
    op->at = NULL;
    op->n_ids = 0;
}
