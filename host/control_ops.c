/* Control requests applied to the supervisor (see control_ops.h). */
#include "control_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_status.h"

void sw_ctl_error_reply(sw_jbuf *reply, const char *msg)
{
    sw_jbuf_lit(reply, "{\"ok\":false,\"error\":");
    sw_jbuf_str(reply, msg);
    sw_jbuf_lit(reply, "}");
}

static bool active(const sw_svc *v) { return v->pid != 0 || v->state == SW_SVC_STOPPING; }

/* A service that will not change by itself soon: running, failed (even if a retry is
 * scheduled), ended for good, blocked by a dependency, or not wanted and down. */
static bool settled(const sw_svc *v)
{
    if (v->held) return false;
    if (v->state == SW_SVC_RUNNING || v->state == SW_SVC_FAILED) return true;
    if (v->state == SW_SVC_STARTING || v->state == SW_SVC_STOPPING) return false;
    if (v->waiting || v->final || !v->wanted) return true;
    return v->state == SW_SVC_INACTIVE && v->reason; /* blocked by a dependency */
}

static void mark_dependents(sw_supervisor *s, size_t i, bool *set)
{
    if (set[i]) return;
    set[i] = true;
    for (size_t k = 0; k < s->svcs[i].n_dependents; k++) mark_dependents(s, s->svcs[i].dependents[k], set);
}

static bool done(const sw_ctl_op *op, sw_supervisor *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (!op->set[i]) continue;
        const sw_svc *v = &s->svcs[i];
        if (op->req.cmd == SW_CTL_STOP ? active(v) : !settled(v)) return false;
    }
    return true;
}

/* Whether the operation reached what it asked for. */
static bool succeeded(const sw_ctl_op *op)
{
    const sw_svc *v = op->svc;
    if (op->req.cmd == SW_CTL_STOP) return !active(v);
    return v->state == SW_SVC_RUNNING || (v->state == SW_SVC_STOPPED && v->reason && strcmp(v->reason, "returned") == 0);
}

static void outcome_text(const sw_ctl_op *op, size_t n_set, bool in_time, char *out, size_t size)
{
    const sw_svc *v = op->svc;
    const char *id = v->entry->id, *state = sw_svc_state_name(v->state);
    if (!in_time) {
        snprintf(out, size, "%s is still %s after %gs", id, state, op->req.timeout);
    } else if (op->req.cmd == SW_CTL_STOP) {
        if (n_set > 1) snprintf(out, size, "%s %s, with %zu dependent%s", id, state, n_set - 1, n_set == 2 ? "" : "s");
        else snprintf(out, size, "%s %s", id, state);
    } else if (succeeded(op)) {
        snprintf(out, size, "%s %s%s", id, op->req.cmd == SW_CTL_RESTART ? "restarted: " : "", state);
    } else {
        snprintf(out, size, "%s %s%s%s%s", id, state, v->reason ? ": " : "", v->reason ? v->reason : "",
                 v->waiting ? " (a retry is scheduled)" : "");
    }
}

static void op_reply(const sw_ctl_op *op, sw_supervisor *s, bool in_time, sw_jbuf *b)
{
    size_t n_set = 0;
    for (size_t i = 0; i < s->n; i++) n_set += op->set[i];
    bool ok = in_time && succeeded(op);
    char text[1024];
    outcome_text(op, n_set, in_time, text, sizeof text);
    sw_jbuf_lit(b, ok ? "{\"ok\":true,\"message\":" : "{\"ok\":false,\"error\":");
    sw_jbuf_str(b, text);
    sw_jbuf_key(b, "cmd", false);
    sw_jbuf_str(b, sw_ctl_cmd_name(op->req.cmd));
    sw_jbuf_key(b, "services", false);
    sw_jbuf_lit(b, "[");
    bool first = true;
    int64_t wall = sw_ctl_wall_ns();
    for (size_t i = 0; i < s->n; i++) {
        if (!op->set[i]) continue;
        sw_jbuf_lit(b, first ? "{" : ",{");
        first = false;
        sw_ctl_service_json(b, &s->svcs[i], wall, uv_hrtime());
        sw_jbuf_lit(b, "}");
    }
    sw_jbuf_lit(b, "]}");
}

static void reload(sw_supervisor *s, bool all, sw_jbuf *b)
{
    /* RELOADING=1 / READY=1 around the reload; the notifier drops repeats, so the supervisor
     * may send them too. READY=1 only if the host was ready: else it comes when it is. */
    if (s->notify) s->notify(s->notify_arg, "RELOADING=1");
    char *errors = NULL;
    int rc = sw_supervisor_reload(s, all, &errors);
    if (s->notify && s->ready_sent) s->notify(s->notify_arg, "READY=1");
    if (rc == 0) {
        sw_jbuf_lit(b, all ? "{\"ok\":true,\"message\":\"reloaded; every service restarts\"}" : "{\"ok\":true,\"message\":\"reloaded\"}");
    } else {
        sw_jbuf_lit(b, "{\"ok\":false,\"error\":\"reload failed: nothing changed\",\"errors\":[");
        bool first = true;
        for (char *line = errors, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = 0;
            if (!*line) continue;
            if (!first) sw_jbuf_lit(b, ",");
            first = false;
            sw_jbuf_str(b, line);
        }
        sw_jbuf_lit(b, "]}");
    }
    free(errors);
}

static bool unknown_service(const char *id, sw_jbuf *b)
{
    char msg[600];
    snprintf(msg, sizeof msg, "no service \"%.500s\"", id);
    sw_jbuf_lit(b, "{\"ok\":false,\"unknown\":true,\"error\":");
    sw_jbuf_str(b, msg);
    sw_jbuf_lit(b, "}");
    return true;
}

static void log_request(sw_supervisor *s, const sw_ctl_request *r)
{
    sw_log_field f[2] = {{.key = "cmd", .type = SW_LF_STR, .s = sw_ctl_cmd_name(r->cmd)}};
    size_t n = 1;
    if (r->id) f[n++] = (sw_log_field){.key = "id", .type = SW_LF_STR, .s = r->id};
    sw_log_write(s->log, r->cmd == SW_CTL_STATUS ? SW_LOG_DEBUG : SW_LOG_INFO, NULL, "control request", f, n);
}

/* start, stop or restart: ask the supervisor, then wait for the outcome. */
static bool act(sw_ctl_op *op, sw_supervisor *s, sw_jbuf *b)
{
    op->set = calloc(s->n ? s->n : 1, sizeof *op->set);
    if (!op->set) {
        sw_ctl_error_reply(b, "out of memory");
        return true;
    }
    size_t i = op->svc->index;
    if (op->req.cmd == SW_CTL_START) {
        op->set[i] = true;
        sw_supervisor_start_one(s, op->req.id);
    } else {
        mark_dependents(s, i, op->set);
        if (op->req.cmd == SW_CTL_STOP) sw_supervisor_stop_one(s, op->req.id);
        else sw_supervisor_restart_one(s, op->req.id);
    }
    op->deadline = uv_hrtime() + (uint64_t)(op->req.timeout * 1e9);
    return sw_ctl_op_poll(op, s, b);
}

bool sw_ctl_op_begin(sw_ctl_op *op, sw_supervisor *s, uint64_t host_start, const char *line, size_t len, sw_jbuf *b)
{
    memset(op, 0, sizeof *op);
    char err[256];
    if (sw_ctl_request_parse(line, len, &op->req, err, sizeof err) != 0) {
        sw_ctl_error_reply(b, err);
        return true;
    }
    log_request(s, &op->req);
    if (op->req.id && !(op->svc = sw_supervisor_find(s, op->req.id))) return unknown_service(op->req.id, b);
    switch (op->req.cmd) {
    case SW_CTL_STATUS:
        if (op->svc) sw_ctl_status_one(b, s, op->svc);
        else sw_ctl_status_all(b, s, host_start);
        return true;
    case SW_CTL_RELOAD:
        if (s->shutting_down) sw_ctl_error_reply(b, "the host is shutting down");
        else reload(s, op->req.all, b);
        return true;
    default:
        if (s->shutting_down && op->req.cmd != SW_CTL_STOP) {
            sw_ctl_error_reply(b, "the host is shutting down");
            return true;
        }
        return act(op, s, b);
    }
}

bool sw_ctl_op_poll(sw_ctl_op *op, sw_supervisor *s, sw_jbuf *b)
{
    bool finished = done(op, s);
    if (!finished && op->req.timeout == 0) { /* asked not to wait */
        sw_jbuf_lit(b, "{\"ok\":true,\"message\":\"requested\"}");
        return true;
    }
    if (!finished && uv_hrtime() < op->deadline) return false;
    op_reply(op, s, finished, b);
    return true;
}

void sw_ctl_op_free(sw_ctl_op *op)
{
    sw_ctl_request_free(&op->req);
    free(op->set);
    op->set = NULL;
}
