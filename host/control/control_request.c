/* Parsing and checking control requests (see control_request.h): Jansson reads the line,
 * this file checks what it holds. */
#include "control_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const cmd_names[] = {"status", "start", "stop", "restart", "reload", "logs"};
#define N_CMDS (sizeof cmd_names / sizeof *cmd_names)

const char *sw_ctl_cmd_name(sw_ctl_cmd cmd) { return cmd_names[cmd]; }

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The line as a JSON object, or NULL with the first problem in err. */
static json_t *parse_object(const char *line, size_t len, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < len && blank(line[i])) i++;
    if (i == len || line[i] != '{') {
        fail(err, errlen, "%s", "a request is one JSON object per line");
        return NULL;
    }
    if (memchr(line, 0, len)) {
        fail(err, errlen, "%s", "a request must not contain NUL bytes");
        return NULL;
    }
    char why[200];
    json_t *root = sw_json_parse(line, len, SW_CTL_MAX_DEPTH, why, sizeof why);
    if (!root) fail(err, errlen, "malformed JSON: %s", why);
    else if (!json_is_object(root)) { /* cannot be, after the '{': kept for safety */
        json_decref(root);
        root = NULL;
        fail(err, errlen, "%s", "a request is one JSON object per line");
    }
    return root;
}

static int parse_cmd(const json_t *v, sw_ctl_request *out, char *err, size_t errlen)
{
    if (!json_is_string(v)) return fail(err, errlen, "%s", "\"cmd\" must be a string");
    for (size_t k = 0; k < N_CMDS; k++)
        if (strcmp(json_string_value(v), cmd_names[k]) == 0) {
            out->cmd = (sw_ctl_cmd)k;
            return 0;
        }
    return fail(err, errlen,
                "unknown command \"%.64s\" (status, start, stop, restart, reload or logs)",
                json_string_value(v));
}

/* The fields of logs (lines, since, follow); unknown fields are refused. */
static int parse_logs_field(const char *k, const json_t *v, sw_ctl_request *out, char *err,
                            size_t errlen)
{
    if (strcmp(k, "lines") == 0) {
        json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
        if (n < 0 || n > SW_CTL_LOGS_MAX_LINES)
            return fail(err, errlen, "%s", "\"lines\" must be a whole number (0 to 1000000)");
        out->lines = (size_t)n;
        return 0;
    }
    if (strcmp(k, "since") == 0) {
        double t = json_is_number(v) ? json_number_value(v) : -1;
        if (!(t >= 0 && t <= 1e10))
            return fail(err, errlen, "%s", "\"since\" must be a number of seconds ago");
        out->since = t;
        return 0;
    }
    if (strcmp(k, "follow") == 0) {
        if (!json_is_boolean(v)) return fail(err, errlen, "%s", "\"follow\" must be true or false");
        out->follow = json_is_true(v);
        return 0;
    }
    return fail(err, errlen,
                "unknown field \"%.64s\" (cmd, id, all, timeout, lines, since, follow)", k);
}

/* One field of the object; unknown fields are refused. */
static int parse_field(const char *k, const json_t *v, sw_ctl_request *out, bool *has_cmd,
                       char *err, size_t errlen)
{
    if (strcmp(k, "cmd") == 0) {
        *has_cmd = true;
        return parse_cmd(v, out, err, errlen);
    }
    if (strcmp(k, "id") == 0) {
        if (!json_is_string(v) || json_string_length(v) == 0)
            return fail(err, errlen, "%s", "\"id\" must be a non-empty string");
        out->id = strdup(json_string_value(v));
        return out->id ? 0 : fail(err, errlen, "%s", "out of memory");
    }
    if (strcmp(k, "all") == 0) {
        if (!json_is_boolean(v)) return fail(err, errlen, "%s", "\"all\" must be true or false");
        out->all = json_is_true(v);
        return 0;
    }
    if (strcmp(k, "timeout") == 0) {
        double t = json_is_number(v) ? json_number_value(v) : -1;
        if (!(t >= 0 && t <= 86400))
            return fail(err, errlen, "%s", "\"timeout\" must be a number of seconds (0 to 86400)");
        out->timeout = t;
        return 0;
    }
    return parse_logs_field(k, v, out, err, errlen);
}

/* Which fields each command takes. */
static int check_fields(const sw_ctl_request *r, bool has_all, bool has_timeout,
                        const char *logs_field, char *err, size_t errlen)
{
    const char *name = cmd_names[r->cmd];
    bool acts = r->cmd == SW_CTL_START || r->cmd == SW_CTL_STOP || r->cmd == SW_CTL_RESTART;
    if (acts && !r->id) return fail(err, errlen, "%s needs \"id\"", name);
    if (r->cmd == SW_CTL_RELOAD && r->id) return fail(err, errlen, "%s", "reload takes no \"id\"");
    if (has_all && r->cmd != SW_CTL_RELOAD)
        return fail(err, errlen, "\"all\" does not apply to %s", name);
    if (has_timeout && !acts) return fail(err, errlen, "\"timeout\" does not apply to %s", name);
    if (logs_field && r->cmd != SW_CTL_LOGS) {
        snprintf(err, errlen, "\"%s\" does not apply to %s", logs_field, name);
        return -1;
    }
    return 0;
}

int sw_ctl_request_parse(const char *line, size_t len, sw_ctl_request *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->timeout = SW_CTL_DEFAULT_TIMEOUT;
    out->lines = SW_CTL_LOGS_LINES;
    if (len > SW_CTL_MAX_LINE)
        return fail(err, errlen, "request too long (more than %s bytes)", "4096");
    json_t *root = parse_object(line, len, err, errlen);
    if (!root) return -1;
    int rc = -1;
    bool has_cmd = false, has_all = false, has_timeout = false;
    const char *key, *logs_field = NULL;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        has_all = has_all || strcmp(key, "all") == 0;
        has_timeout = has_timeout || strcmp(key, "timeout") == 0;
        if (!logs_field &&
            (strcmp(key, "lines") == 0 || strcmp(key, "since") == 0 || strcmp(key, "follow") == 0))
            logs_field = key;
        if (parse_field(key, v, out, &has_cmd, err, errlen) != 0) goto done;
    }
    if (!has_cmd) {
        fail(err, errlen, "%s", "the request has no \"cmd\"");
        goto done;
    }
    rc = check_fields(out, has_all, has_timeout, logs_field, err, errlen);
done:
    json_decref(root);
    return rc;
}

void sw_ctl_request_free(sw_ctl_request *r)
{
    free(r->id);
    r->id = NULL;
}
