/* Parsing and checking control requests (see control_request.h). */
#include "control_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "yaml_tree.h"

static const char *const cmd_names[] = {"status", "start", "stop", "restart", "reload"};
#define N_CMDS (sizeof cmd_names / sizeof *cmd_names)

const char *sw_ctl_cmd_name(sw_ctl_cmd cmd) { return cmd_names[cmd]; }

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The line as a tree, or NULL with the first problem in err. */
static sw_node *parse_tree(sw_arena *arena, const char *line, size_t len, char *err, size_t errlen)
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
    sw_diags diags;
    sw_diags_init(&diags);
    sw_node *root = sw_yaml_parse(arena, "request", line, len, &diags);
    if (!root) {
        snprintf(err, errlen, "malformed JSON: %s", diags.n ? diags.v[0].msg : "cannot parse");
    }
    sw_diags_free(&diags);
    return root;
}

static int parse_cmd(const sw_node *v, sw_ctl_request *out, char *err, size_t errlen)
{
    if (!sw_node_is_string(v)) return fail(err, errlen, "%s", "\"cmd\" must be a string");
    for (size_t k = 0; k < N_CMDS; k++)
        if (strcmp(v->str, cmd_names[k]) == 0) {
            out->cmd = (sw_ctl_cmd)k;
            return 0;
        }
    return fail(err, errlen, "unknown command \"%.64s\" (status, start, stop, restart or reload)", v->str);
}

/* One field of the object; unknown fields are refused. */
static int parse_field(const sw_node *key, const sw_node *v, sw_ctl_request *out, bool *has_cmd, char *err, size_t errlen)
{
    const char *k = key->str;
    if (strcmp(k, "cmd") == 0) {
        *has_cmd = true;
        return parse_cmd(v, out, err, errlen);
    }
    if (strcmp(k, "id") == 0) {
        if (!sw_node_is_string(v) || v->len == 0) return fail(err, errlen, "%s", "\"id\" must be a non-empty string");
        out->id = strdup(v->str);
        return out->id ? 0 : fail(err, errlen, "%s", "out of memory");
    }
    if (strcmp(k, "all") == 0) {
        if (v->type != SW_NODE_SCALAR || v->scalar != SW_SCALAR_BOOL) return fail(err, errlen, "%s", "\"all\" must be true or false");
        out->all = v->num != 0;
        return 0;
    }
    if (strcmp(k, "timeout") == 0) {
        bool number = v->type == SW_NODE_SCALAR && (v->scalar == SW_SCALAR_INT || v->scalar == SW_SCALAR_FLOAT);
        if (!number || !(v->num >= 0 && v->num <= 86400)) return fail(err, errlen, "%s", "\"timeout\" must be a number of seconds (0 to 86400)");
        out->timeout = v->num;
        return 0;
    }
    return fail(err, errlen, "unknown field \"%.64s\" (cmd, id, all, timeout)", k);
}

/* Which fields each command takes. */
static int check_fields(const sw_ctl_request *r, bool has_all, bool has_timeout, char *err, size_t errlen)
{
    const char *name = cmd_names[r->cmd];
    bool acts = r->cmd == SW_CTL_START || r->cmd == SW_CTL_STOP || r->cmd == SW_CTL_RESTART;
    if (acts && !r->id) return fail(err, errlen, "%s needs \"id\"", name);
    if (r->cmd == SW_CTL_RELOAD && r->id) return fail(err, errlen, "%s", "reload takes no \"id\"");
    if (has_all && r->cmd != SW_CTL_RELOAD) return fail(err, errlen, "\"all\" does not apply to %s", name);
    if (has_timeout && !acts) return fail(err, errlen, "\"timeout\" does not apply to %s", name);
    return 0;
}

int sw_ctl_request_parse(const char *line, size_t len, sw_ctl_request *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->timeout = SW_CTL_DEFAULT_TIMEOUT;
    if (len > SW_CTL_MAX_LINE) return fail(err, errlen, "request too long (more than %s bytes)", "4096");
    sw_arena arena;
    sw_arena_init(&arena);
    int rc = -1;
    sw_node *root = parse_tree(&arena, line, len, err, errlen);
    if (!root) goto done;
    if (root->type != SW_NODE_MAP) {
        fail(err, errlen, "%s", "a request is one JSON object per line");
        goto done;
    }
    bool has_cmd = false, has_all = false, has_timeout = false;
    for (size_t i = 0; i < root->n; i++) {
        const sw_node *key = sw_node_key(root, i);
        has_all = has_all || strcmp(key->str, "all") == 0;
        has_timeout = has_timeout || strcmp(key->str, "timeout") == 0;
        if (parse_field(key, sw_node_val(root, i), out, &has_cmd, err, errlen) != 0) goto done;
    }
    if (!has_cmd) {
        fail(err, errlen, "%s", "the request has no \"cmd\"");
        goto done;
    }
    rc = check_fields(out, has_all, has_timeout, err, errlen);
done:
    sw_arena_free(&arena);
    return rc;
}

void sw_ctl_request_free(sw_ctl_request *r)
{
    free(r->id);
    r->id = NULL;
}
