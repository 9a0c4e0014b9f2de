/* `steward status|top|start|stop|restart|reload`: ask a running host through its control socket
 * (docs/operating.md) and print what it says; requests are written and replies read with the
 * JSON module (json.h). Exit codes as systemctl's: 0 done; 1 failed or no host answers;
 * `status ID` 3 when the service is not running; 4 for an id that names no service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "control_client.h"
#include "control_request.h"
#include "json.h"

#define EXIT_NOT_RUNNING 3

char *sw_cli_socket_path(const sw_cli *cli)
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
    char *path = sw_cli_socket_path(cli);
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

/* ---- requests and replies ---- */

/* {"cmd":cmd,"id":id,"all":true} (id and all when given) as text, malloc'd; NULL when memory
 * runs out (printed). */
static char *request(const sw_cli *cli, const char *cmd)
{
    json_t *req = json_object();
    int rc = sw_json_set(req, "cmd", sw_json_str(cmd));
    if (cli->id) rc |= sw_json_set(req, "id", sw_json_str(cli->id));
    if (cli->all) rc |= sw_json_set(req, "all", json_true());
    char *text = rc == 0 ? sw_json_dump(req, false, NULL) : NULL;
    json_decref(req);
    if (!text) fprintf(stderr, "steward %s: out of memory\n", cli->command);
    return text;
}

/* The reply as a JSON object, or NULL after printing why. */
static json_t *parse_reply(const char *text)
{
    char why[200];
    json_t *root = sw_json_parse(text, strlen(text), SW_CTL_MAX_DEPTH, why, sizeof why);
    if (root && json_is_object(root)) return root;
    if (root) snprintf(why, sizeof why, "not an object");
    json_decref(root);
    fprintf(stderr, "steward: the host sent a reply that is not JSON (%s)\n", why);
    return NULL;
}

static const char *str(const json_t *map, const char *key)
{
    const json_t *n = json_object_get(map, key);
    return json_is_string(n) ? json_string_value(n) : NULL;
}

static const char *str_or(const json_t *map, const char *key, const char *dflt)
{
    const char *s = str(map, key);
    return s ? s : dflt;
}

static bool is_true(const json_t *map, const char *key)
{
    return json_is_true(json_object_get(map, key));
}

static double num(const json_t *map, const char *key, double dflt)
{
    const json_t *n = json_object_get(map, key);
    return json_is_number(n) ? json_number_value(n) : dflt;
}

/* The strings of a list (others are skipped): the list's size, or 0 when it is none. */
static size_t list_size(const json_t *list)
{
    return json_is_array(list) ? json_array_size(list) : 0;
}

static const char *item(const json_t *list, size_t i)
{
    const json_t *n = json_array_get(list, i);
    return json_is_string(n) ? json_string_value(n) : "?";
}

/* The exit code of a reply that is not ok: 4 for an id that names no service, else 1. */
static int exit_code(const json_t *root) { return is_true(root, "unknown") ? EXIT_UNKNOWN : 1; }

int sw_cli_report_error(const sw_cli *cli, const json_t *root)
{
    fprintf(stderr, "steward %s: %s\n", cli->command, str_or(root, "error", "failed"));
    const json_t *errors = json_object_get(root, "errors");
    for (size_t i = 0; i < list_size(errors); i++) fprintf(stderr, "  %s\n", item(errors, i));
    return exit_code(root);
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

/* Bytes as systemctl shows them: "812K", "1.2M", "3.4G" ("-" when negative: not known). */
static void bytes(char *out, size_t size, double b)
{
    const char *units = "BKMGT";
    int u = 0;
    while (b >= 1024 && u < 4) b /= 1024, u++;
    if (b < 0) snprintf(out, size, "-");
    else if (u == 0 || b >= 10) snprintf(out, size, "%.0f%c", b, units[u]);
    else snprintf(out, size, "%.1f%c", b, units[u]);
}

/* CPU seconds: "0.25s" below 10 s, then as a duration. */
static void cpu_time(char *out, size_t size, double s)
{
    if (s >= 0 && s < 10) snprintf(out, size, "%.2fs", s);
    else duration(out, size, s);
}

enum {
    C_ID,
    C_STATE,
    C_PID,
    C_UPTIME,
    C_PROCS,
    C_MEMORY,
    C_CPU,
    C_QUEUED,
    C_RESTARTS,
    C_ATTEMPT,
    C_RETRY,
    C_REASON,
    C_GROUP,
    C_HEALTH,
    N_COLS
};
static const char *const headers[N_COLS] = {"ID",         "STATE",  "PID",    "UPTIME",   "PROCS",
                                            "MEMORY",     "CPU",    "QUEUED", "RESTARTS", "ATTEMPT",
                                            "NEXT RETRY", "REASON", "GROUP",  "HEALTH"};
#define REASON_MAX 60

/* Liveness in a few words: "healthy", "unhealthy (2/3)", "alive 1.2s ago", both, or "-". */
static void liveness(const json_t *svc, char *out, size_t size)
{
    const json_t *h = json_object_get(svc, "health");
    const char *st = json_is_object(h) ? str(h, "state") : NULL;
    size_t len = 0;
    out[0] = 0;
    if (st && strcmp(st, "unhealthy") == 0)
        len = (size_t)snprintf(out, size, "unhealthy (%.0f/%.0f)", num(h, "failures", 0),
                               num(h, "of", 0));
    else if (st) len = (size_t)snprintf(out, size, "%s", st);
    double age = num(svc, "last_alive", -1);
    if (age >= 0 && len < size) {
        char d[32];
        duration(d, sizeof d, age);
        snprintf(out + len, size - len, "%salive %s ago", len ? ", " : "", d);
    }
    if (!out[0]) snprintf(out, size, "-");
}

/* The cells of one service row, each written into cells[k] (size 128 but reason/id). */
static void row(const json_t *svc, char cells[N_COLS][256])
{
    snprintf(cells[C_ID], 256, "%s", str_or(svc, "id", "?"));
    snprintf(cells[C_STATE], 256, "%s", str_or(svc, "state", "?"));
    snprintf(cells[C_PID], 256, "%s", str_or(svc, "pid", "-"));
    duration(cells[C_UPTIME], 256, num(svc, "uptime", -1));
    snprintf(cells[C_PROCS], 256, "%.0f", num(svc, "processes", 0));
    bytes(cells[C_MEMORY], 256, num(svc, "memory", -1));
    cpu_time(cells[C_CPU], 256, num(svc, "cpu", -1));
    snprintf(cells[C_QUEUED], 256, "%.0f", num(svc, "queued", 0));
    snprintf(cells[C_RESTARTS], 256, "%.0f", num(svc, "restarts", 0));
    snprintf(cells[C_ATTEMPT], 256, "%.0f", num(svc, "attempt", 0));
    double in = num(svc, "next_retry_in", -1);
    if (in >= 0) {
        char d[32];
        duration(d, sizeof d, in);
        snprintf(cells[C_RETRY], 256, "in %s", d);
    } else snprintf(cells[C_RETRY], 256, "-");
    const char *reason = str(svc, "reason");
    if (!reason) reason = "-";
    const char *nl = strchr(reason, '\n');
    int n = nl ? (int)(nl - reason) : (int)strlen(reason);
    if (n > REASON_MAX) snprintf(cells[C_REASON], 256, "%.*s...", REASON_MAX - 3, reason);
    else snprintf(cells[C_REASON], 256, "%.*s", n, reason);
    snprintf(cells[C_GROUP], 256, "%s", str_or(svc, "group", "-"));
    liveness(svc, cells[C_HEALTH], 256);
}

static void print_row(const char *const *cells, const int *width)
{
    for (int k = 0; k + 1 < N_COLS; k++) printf("%-*s  ", width[k], cells[k]);
    printf("%s\n", cells[N_COLS - 1]);
}

static void print_table(const json_t *services)
{
    size_t n = list_size(services);
    char(*cells)[N_COLS][256] = calloc(n ? n : 1, sizeof *cells);
    if (!cells) return;
    int width[N_COLS];
    for (int k = 0; k < N_COLS; k++) width[k] = (int)strlen(headers[k]);
    for (size_t i = 0; i < n; i++) {
        row(json_array_get(services, i), cells[i]);
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
static void print_summary(const json_t *root)
{
    const json_t *services = json_object_get(root, "services"),
                 *host = json_object_get(root, "host");
    size_t n = list_size(services);
    const char *states[8];
    size_t counts[8], kinds = 0;
    for (size_t i = 0; i < n; i++) {
        const char *st = str_or(json_array_get(services, i), "state", "?");
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

static void print_list(const char *label, const json_t *list)
{
    printf("  %-12s", label);
    if (list_size(list) == 0) printf("-");
    for (size_t i = 0; i < list_size(list); i++) printf("%s%s", i ? ", " : "", item(list, i));
    printf("\n");
}

static void print_service(const json_t *svc)
{
    char c[N_COLS][256], peak[32], max[32];
    row(svc, c);
    printf("%s - %s\n", c[C_ID], c[C_STATE]);
    printf("  %-12s%s\n  %-12s%s\n", "pid:", c[C_PID], "uptime:", c[C_UPTIME]);
    bytes(peak, sizeof peak, num(svc, "memory_peak", -1));
    bytes(max, sizeof max, num(svc, "memory_max", -1));
    printf("  %-12s%s\n  %-12s%s (peak %s, max %s)\n  %-12s%s\n  %-12s%s\n",
           "processes:", c[C_PROCS], "memory:", c[C_MEMORY], peak, max, "cpu:", c[C_CPU],
           "queued:", c[C_QUEUED]);
    printf("  %-12s%s\n  %-12s%s\n", "restarts:", c[C_RESTARTS], "attempt:", c[C_ATTEMPT]);
    const char *at = str(svc, "next_retry");
    if (at) printf("  %-12s%s (%s)\n", "next retry:", at, c[C_RETRY]);
    else printf("  %-12s-\n", "next retry:");
    printf("  %-12s%s\n  %-12s%s\n", "reason:", str_or(svc, "reason", "-"), "group:", c[C_GROUP]);
    printf("  %-12s%s\n", "health:", c[C_HEALTH]);
    print_list("depends on:", json_object_get(svc, "depends_on"));
    print_list("dependents:", json_object_get(svc, "dependents"));
    const json_t *errors = json_object_get(svc, "errors");
    size_t n = list_size(errors);
    printf("  last errors%s\n", n ? " (newest first):" : ": none");
    for (size_t i = 0; i < n; i++) printf("    - %s\n", item(errors, i));
}

/* ---- commands ---- */

static int status(const sw_cli *cli)
{
    char *req = request(cli, "status");
    char *text = req ? call(cli, req, 10) : NULL;
    free(req);
    if (!text) return 1;
    int code = 0;
    bool ok = strncmp(text, "{\"ok\":true", 10) == 0;
    if (cli->json && ok && !cli->id) { /* the reply is the document: no need to read it */
        printf("%s\n", text);
        free(text);
        return 0;
    }
    json_t *r = parse_reply(text);
    if (!r) code = 1;
    else if (!is_true(r, "ok")) code = sw_cli_report_error(cli, r);
    else if (cli->json) printf("%s\n", text);
    else if (cli->id) print_service(json_object_get(r, "service"));
    else {
        print_table(json_object_get(r, "services"));
        print_summary(r);
    }
    if (code == 0 && cli->id) {
        const char *state = str(json_object_get(r, "service"), "state");
        if (!state || strcmp(state, "running") != 0) code = EXIT_NOT_RUNNING;
    }
    json_decref(r);
    free(text);
    return code;
}

/* start, stop, restart, reload: the reply's message, and each service involved. */
static int act(const sw_cli *cli)
{
    char *req = request(cli, cli->command);
    char *text = req ? call(cli, req, SW_CTL_DEFAULT_TIMEOUT + 10) : NULL;
    free(req);
    if (!text) return 1;
    json_t *r = parse_reply(text);
    int code = r ? 0 : 1;
    if (code == 0 && cli->json) { /* the reply as it came; the exit code as without --json */
        printf("%s\n", text);
        code = is_true(r, "ok") ? 0 : exit_code(r);
        json_decref(r);
        free(text);
        return code;
    }
    if (code == 0 && !is_true(r, "ok")) code = sw_cli_report_error(cli, r);
    else if (code == 0) printf("%s\n", str_or(r, "message", "done"));
    const json_t *services = json_object_get(r, "services");
    for (size_t i = 0; i < list_size(services); i++) {
        const json_t *v = json_array_get(services, i);
        const char *reason = str(v, "reason");
        if (reason)
            printf("  %-24s %-9s %s\n", str_or(v, "id", "?"), str_or(v, "state", "?"), reason);
        else printf("  %-24s %s\n", str_or(v, "id", "?"), str_or(v, "state", "?"));
    }
    json_decref(r);
    free(text);
    return code;
}

/* ---- top ---- */

/* Waits up to ms for a key on stdin: 'q' (or the end of stdin) quits, anything else redraws
 * at once. A terminal is put in non-canonical mode by the caller, so no Enter is needed. */
static bool wait_key(int ms)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0) return true;
    char c = 0;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    return n == 1 && c != 'q' && c != 'Q';
}

/* `steward top`: the status table, redrawn every second until q (like `pm2 monit`, plain
 * terminal codes only). Exits 1 when no host answers, as status does. */
static int top(const sw_cli *cli)
{
    struct termios saved;
    bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        struct termios raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    int code;
    do {
        if (isatty(STDOUT_FILENO)) fputs("\033[H\033[2J", stdout); /* home, clear */
        code = status(cli);
        if (code == 0) printf("\n(refreshing every second; q quits)\n");
        fflush(stdout);
    } while (code == 0 && wait_key(1000));
    if (tty) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    return code;
}

int sw_cmd_control(const sw_cli *cli)
{
    if (strcmp(cli->command, "top") == 0) return top(cli);
    return strcmp(cli->command, "status") == 0 ? status(cli) : act(cli);
}
