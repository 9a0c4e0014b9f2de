/* `steward status|start|stop|restart|reload`: ask a running host through its control socket
 * and print what it says. Exit codes as systemctl's: 0 done; 1 failed or no host answers;
 * `status ID` 3 when the service is not running; 4 for an id that names no service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "control_client.h"
#include "control_request.h"
#include "jsonbuf.h"
#include "yaml_tree.h"

#define EXIT_NOT_RUNNING 3
#define EXIT_UNKNOWN 4

/* The socket: --control, else the config's control.socket, else DIR/.steward.sock, else
 * ./.steward.sock. NULL (message printed) when the config cannot be read. */
static char *socket_path(const sw_cli *cli)
{
    if (cli->control) return strdup(cli->control);
    sw_host_config cfg;
    if (sw_host_config_read(&cfg, cli->config) != 0) return NULL;
    char *path = sw_control_default_path(cli->dir, cfg.control_socket);
    sw_host_config_free(&cfg);
    return path;
}

/* One request, one reply line (malloc'd), or NULL after printing why. */
static char *call(const sw_cli *cli, const char *request, double wait_s)
{
    char *path = socket_path(cli);
    if (!path) return NULL;
    char err[512];
    char *reply = NULL;
    int fd = sw_ctl_connect(path, err, sizeof err);
    if (fd >= 0) {
        reply = sw_ctl_call(fd, request, wait_s, err, sizeof err);
        close(fd);
    }
    if (!reply) fprintf(stderr, "steward %s: %s\n", cli->command, err);
    free(path);
    return reply;
}

/* ---- reading replies ---- */

typedef struct reply {
    sw_arena arena;
    sw_node *root;
} reply;

static int parse_reply(reply *r, const char *text)
{
    sw_arena_init(&r->arena);
    sw_diags diags;
    sw_diags_init(&diags);
    r->root = sw_yaml_parse(&r->arena, "reply", text, strlen(text), &diags);
    sw_diags_free(&diags);
    if (r->root && r->root->type == SW_NODE_MAP) return 0;
    fprintf(stderr, "steward: the host sent a reply that is not JSON\n");
    return -1;
}

static const char *str(const sw_node *map, const char *key)
{
    const sw_node *n = map ? sw_node_get(map, key) : NULL;
    return n && n->type == SW_NODE_SCALAR && n->scalar != SW_SCALAR_NULL ? n->str : NULL;
}

static const char *str_or(const sw_node *map, const char *key, const char *dflt)
{
    const char *s = str(map, key);
    return s ? s : dflt;
}

static bool is_true(const sw_node *map, const char *key)
{
    const sw_node *n = sw_node_get(map, key);
    return n && n->type == SW_NODE_SCALAR && n->scalar == SW_SCALAR_BOOL && n->num != 0;
}

static double num(const sw_node *map, const char *key, double dflt)
{
    const sw_node *n = sw_node_get(map, key);
    return n && n->type == SW_NODE_SCALAR && (n->scalar == SW_SCALAR_INT || n->scalar == SW_SCALAR_FLOAT) ? n->num : dflt;
}

/* An error reply: printed, with its list of errors; the exit code. */
static int report_error(const sw_cli *cli, const sw_node *root)
{
    fprintf(stderr, "steward %s: %s\n", cli->command, str_or(root, "error", "failed"));
    const sw_node *errors = sw_node_get(root, "errors");
    for (size_t i = 0; errors && errors->type == SW_NODE_SEQ && i < errors->n; i++)
        if (errors->kids[i]->type == SW_NODE_SCALAR) fprintf(stderr, "  %s\n", errors->kids[i]->str);
    return is_true(root, "unknown") ? EXIT_UNKNOWN : 1;
}

/* ---- formatting ---- */

static void duration(char *out, size_t size, double s)
{
    if (s < 0) snprintf(out, size, "-");
    else if (s < 60) snprintf(out, size, "%.1fs", s);
    else if (s < 3600) snprintf(out, size, "%dm%02ds", (int)s / 60, (int)s % 60);
    else if (s < 86400) snprintf(out, size, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
    else snprintf(out, size, "%dd%02dh", (int)(s / 86400), (int)s % 86400 / 3600);
}

#define N_COLS 9
static const char *const headers[N_COLS] = {"ID", "STATE", "PID", "UPTIME", "RESTARTS", "ATTEMPT", "NEXT RETRY", "REASON", "GROUP"};
#define REASON_MAX 60

/* The cells of one service row, each written into cells[k] (size 128 but reason/id). */
static void row(const sw_node *svc, char cells[N_COLS][256])
{
    snprintf(cells[0], 256, "%s", str_or(svc, "id", "?"));
    snprintf(cells[1], 256, "%s", str_or(svc, "state", "?"));
    snprintf(cells[2], 256, "%s", str_or(svc, "pid", "-"));
    duration(cells[3], 256, num(svc, "uptime", -1));
    snprintf(cells[4], 256, "%.0f", num(svc, "restarts", 0));
    snprintf(cells[5], 256, "%.0f", num(svc, "attempt", 0));
    double in = num(svc, "next_retry_in", -1);
    if (in >= 0) {
        char d[32];
        duration(d, sizeof d, in);
        snprintf(cells[6], 256, "in %s", d);
    } else snprintf(cells[6], 256, "-");
    const char *reason = str(svc, "reason");
    if (!reason) reason = "-";
    const char *nl = strchr(reason, '\n');
    int n = nl ? (int)(nl - reason) : (int)strlen(reason);
    if (n > REASON_MAX) snprintf(cells[7], 256, "%.*s...", REASON_MAX - 3, reason);
    else snprintf(cells[7], 256, "%.*s", n, reason);
    snprintf(cells[8], 256, "%s", str_or(svc, "group", "-"));
}

static void print_row(const char *const *cells, const int *width)
{
    for (int k = 0; k + 1 < N_COLS; k++) printf("%-*s  ", width[k], cells[k]);
    printf("%s\n", cells[N_COLS - 1]);
}

static void print_table(const sw_node *services)
{
    size_t n = services && services->type == SW_NODE_SEQ ? services->n : 0;
    char (*cells)[N_COLS][256] = calloc(n ? n : 1, sizeof *cells);
    if (!cells) return;
    int width[N_COLS];
    for (int k = 0; k < N_COLS; k++) width[k] = (int)strlen(headers[k]);
    for (size_t i = 0; i < n; i++) {
        row(services->kids[i], cells[i]);
        for (int k = 0; k < N_COLS; k++)
            if ((int)strlen(cells[i][k]) > width[k]) width[k] = (int)strlen(cells[i][k]);
    }
    print_row(headers, width);
    for (size_t i = 0; i < n; i++) {
        const char *line[N_COLS];
        for (int k = 0; k < N_COLS; k++) line[k] = cells[i][k];
        print_row(line, width);
    }
    free(cells);
}

/* "6 services: 5 running, 1 failed; host pid 42, up 3m05s" (states in the order they appear). */
static void print_summary(const sw_node *root)
{
    const sw_node *services = sw_node_get(root, "services"), *host = sw_node_get(root, "host");
    size_t n = services && services->type == SW_NODE_SEQ ? services->n : 0;
    const char *states[8];
    size_t counts[8], kinds = 0;
    for (size_t i = 0; i < n; i++) {
        const char *st = str_or(services->kids[i], "state", "?");
        size_t k = 0;
        while (k < kinds && strcmp(states[k], st) != 0) k++;
        if (k == kinds && kinds < 8) {
            states[kinds] = st;
            counts[kinds++] = 0;
        }
        if (k < kinds) counts[k]++;
    }
    printf("\n%zu service%s", n, n == 1 ? "" : "s");
    for (size_t k = 0; k < kinds; k++) printf("%s%zu %s", k ? ", " : ": ", counts[k], states[k]);
    char up[32];
    duration(up, sizeof up, host ? num(host, "uptime", -1) : -1);
    printf("; host pid %.0f, up %s%s\n", host ? num(host, "pid", 0) : 0, up,
           host && is_true(host, "shutting_down") ? ", shutting down" : "");
}

static void print_list(const char *label, const sw_node *list)
{
    printf("  %-12s", label);
    if (!list || list->type != SW_NODE_SEQ || list->n == 0) printf("-");
    for (size_t i = 0; list && list->type == SW_NODE_SEQ && i < list->n; i++) printf("%s%s", i ? ", " : "", list->kids[i]->str);
    printf("\n");
}

static void print_service(const sw_node *svc)
{
    char c[N_COLS][256];
    row(svc, c);
    printf("%s - %s\n", c[0], c[1]);
    printf("  %-12s%s\n  %-12s%s\n  %-12s%s\n  %-12s%s\n", "pid:", c[2], "uptime:", c[3], "restarts:", c[4], "attempt:", c[5]);
    const char *at = str(svc, "next_retry");
    if (at) printf("  %-12s%s (%s)\n", "next retry:", at, c[6]);
    else printf("  %-12s-\n", "next retry:");
    printf("  %-12s%s\n  %-12s%s\n", "reason:", str_or(svc, "reason", "-"), "group:", c[8]);
    print_list("depends on:", sw_node_get(svc, "depends_on"));
    print_list("dependents:", sw_node_get(svc, "dependents"));
    const sw_node *errors = sw_node_get(svc, "errors");
    size_t n = errors && errors->type == SW_NODE_SEQ ? errors->n : 0;
    printf("  last errors%s\n", n ? " (newest first):" : ": none");
    for (size_t i = 0; i < n; i++) printf("    - %s\n", errors->kids[i]->str);
}

/* ---- commands ---- */

static int status(const sw_cli *cli)
{
    sw_jbuf req;
    sw_jbuf_init(&req);
    sw_jbuf_lit(&req, "{\"cmd\":\"status\"");
    if (cli->id) {
        sw_jbuf_lit(&req, ",\"id\":");
        sw_jbuf_str(&req, cli->id);
    }
    sw_jbuf_lit(&req, "}");
    char *text = req.oom ? NULL : call(cli, req.p, 10);
    sw_jbuf_free(&req);
    if (!text) return 1;
    int code = 0;
    bool ok = strncmp(text, "{\"ok\":true", 10) == 0;
    if (cli->json && ok && !cli->id) { /* the reply is the document: no need to read it */
        printf("%s\n", text);
        free(text);
        return 0;
    }
    reply r;
    if (parse_reply(&r, text) != 0) code = 1;
    else if (!is_true(r.root, "ok")) code = report_error(cli, r.root);
    else if (cli->json) printf("%s\n", text);
    else if (cli->id) print_service(sw_node_get(r.root, "service"));
    else {
        print_table(sw_node_get(r.root, "services"));
        print_summary(r.root);
    }
    if (code == 0 && cli->id) {
        const char *state = str(sw_node_get(r.root, "service"), "state");
        if (!state || strcmp(state, "running") != 0) code = EXIT_NOT_RUNNING;
    }
    sw_arena_free(&r.arena);
    free(text);
    return code;
}

/* start, stop, restart, reload: the reply's message, and each service involved. */
static int act(const sw_cli *cli)
{
    sw_jbuf req;
    sw_jbuf_init(&req);
    sw_jbuf_lit(&req, "{\"cmd\":");
    sw_jbuf_str(&req, cli->command);
    if (cli->id) {
        sw_jbuf_lit(&req, ",\"id\":");
        sw_jbuf_str(&req, cli->id);
    }
    if (cli->all) sw_jbuf_lit(&req, ",\"all\":true");
    sw_jbuf_lit(&req, "}");
    char *text = req.oom ? NULL : call(cli, req.p, SW_CTL_DEFAULT_TIMEOUT + 10);
    sw_jbuf_free(&req);
    if (!text) return 1;
    reply r;
    int code = parse_reply(&r, text) != 0 ? 1 : 0;
    if (code == 0 && !is_true(r.root, "ok")) code = report_error(cli, r.root);
    else if (code == 0) printf("%s\n", str_or(r.root, "message", "done"));
    const sw_node *services = r.root && r.root->type == SW_NODE_MAP ? sw_node_get(r.root, "services") : NULL;
    for (size_t i = 0; services && services->type == SW_NODE_SEQ && i < services->n; i++) {
        const sw_node *v = services->kids[i];
        const char *reason = str(v, "reason");
        if (reason) printf("  %-24s %-9s %s\n", str_or(v, "id", "?"), str_or(v, "state", "?"), reason);
        else printf("  %-24s %s\n", str_or(v, "id", "?"), str_or(v, "state", "?"));
    }
    sw_arena_free(&r.arena);
    free(text);
    return code;
}

int sw_cmd_control(const sw_cli *cli)
{
    return strcmp(cli->command, "status") == 0 ? status(cli) : act(cli);
}
