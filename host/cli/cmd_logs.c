/* `steward logs [ID] [-n N] [-f] [--since DURATION] [--json]` (docs/operating.md, "logs"): a
 * running host's recent log lines through its control socket, like `journalctl -u`. The host
 * sends JSON records; --json prints them as they come, else each is written as a text line
 * with the date (log_format.h, colours on a terminal without NO_COLOR). -f keeps reading
 * until the host closes the connection or the user interrupts. Exit codes as the other
 * control commands': 1 no host, 4 an id that names no service. */
#define _DEFAULT_SOURCE /* timegm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "control_client.h"
#include "control_request.h"
#include "log_format.h"
#include "units.h"

#define REPLY_WAIT_S 10.0

/* {"cmd":"logs", ...} as text (malloc'd), NULL when memory runs out. */
static char *logs_request(const sw_cli *cli)
{
    json_t *req = json_object();
    int rc = sw_json_set(req, "cmd", json_string("logs"));
    if (cli->id) rc |= sw_json_set(req, "id", sw_json_str(cli->id));
    if (cli->lines) rc |= sw_json_set(req, "lines", json_integer(strtol(cli->lines, NULL, 10)));
    int64_t since = 0;
    if (cli->since && sw_parse_duration(cli->since, &since) == 0)
        rc |= sw_json_set(req, "since", json_real((double)since / 1e9));
    if (cli->follow) rc |= sw_json_set(req, "follow", json_true());
    char *text = rc == 0 ? sw_json_dump(req, false, NULL) : NULL;
    json_decref(req);
    return text;
}

/* "2026-11-24T03:47:20.773Z" as ns since the epoch; 0 when it is not that. */
static int64_t parse_ts(const char *ts)
{
    struct tm tm = {0};
    int ms = 0;
    if (!ts || sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                      &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000000000 + (int64_t)ms * 1000000;
}

/* One field of a record back as a log field (a key the log renamed, "fields.ts", as it was). */
static sw_log_field field_of(const char *key, json_t *v)
{
    sw_log_field f = {.key = strncmp(key, "fields.", 7) == 0 ? key + 7 : key};
    if (json_is_string(v)) f.type = SW_LF_STR, f.s = json_string_value(v);
    else if (json_is_integer(v)) f.type = SW_LF_INT, f.i = (int64_t)json_integer_value(v);
    else if (json_is_real(v)) f.type = SW_LF_NUM, f.d = json_real_value(v);
    else if (json_is_boolean(v)) f.type = SW_LF_BOOL, f.b = json_is_true(v);
    else f.type = SW_LF_JSON, f.j = v;
    return f;
}

static bool record_key(const char *k)
{
    return !strcmp(k, "ts") || !strcmp(k, "level") || !strcmp(k, "msg") || !strcmp(k, "service");
}

/* A JSON record as a text line on stdout (a line that is no record is printed as it is). */
static void print_text(const char *line, bool color)
{
    json_t *rec = sw_json_parse(line, strlen(line), SW_CTL_MAX_DEPTH, NULL, 0);
    if (!json_is_object(rec)) {
        printf("%s\n", line);
        json_decref(rec);
        return;
    }
    size_t n = 0, cap = json_object_size(rec);
    sw_log_field *fields = calloc(cap ? cap : 1, sizeof *fields);
    const char *key;
    json_t *v;
    json_object_foreach(rec, key, v) if (fields && !record_key(key)) fields[n++] = field_of(key, v);
    const char *svc = json_string_value(json_object_get(rec, "service"));
    const char *msg = json_string_value(json_object_get(rec, "msg"));
    int level = sw_log_level_parse(json_string_value(json_object_get(rec, "level")));
    sw_log_style st = {.color = color,
                       .date = true,
                       .wall_ns = parse_ts(json_string_value(json_object_get(rec, "ts")))};
    lbuf b;
    sw_log_format(&b, &st, level < 0 ? SW_LOG_INFO : (sw_log_level)level, svc, msg ? msg : "",
                  fields, n);
    fwrite(b.p, 1, b.len, stdout);
    sw_log_line_free(&b);
    free(fields);
    json_decref(rec);
}

static void print_record(const sw_cli *cli, const char *line, bool color)
{
    if (cli->json) printf("%s\n", line);
    else print_text(line, color);
}

/* The reply's first line: 0 and the number of lines that follow, or the exit code. */
static int read_head(const sw_cli *cli, sw_ctl_reader *r, size_t *count)
{
    char err[512];
    char *line = sw_ctl_read_line(r, REPLY_WAIT_S, err, sizeof err);
    if (!line) {
        fprintf(stderr, "steward logs: %s\n",
                *err ? err : "the host closed the connection without an answer");
        return 1;
    }
    json_t *head = sw_json_parse(line, strlen(line), SW_CTL_MAX_DEPTH, NULL, 0);
    int code = 0;
    if (!json_is_object(head)) {
        fprintf(stderr, "steward logs: the host sent a reply that is not JSON\n");
        code = 1;
    } else if (!json_is_true(json_object_get(head, "ok"))) {
        code = sw_cli_report_error(cli, head);
    } else {
        *count = (size_t)json_integer_value(json_object_get(head, "lines"));
    }
    json_decref(head);
    return code;
}

/* The records of the reply, then (-f) every record the host sends until it closes. */
static int read_records(const sw_cli *cli, sw_ctl_reader *r, size_t count)
{
    bool color = !cli->json && isatty(1) && !getenv("NO_COLOR");
    char err[512];
    for (size_t i = 0; i < count || cli->follow; i++) {
        char *line = sw_ctl_read_line(r, i < count ? REPLY_WAIT_S : -1, err, sizeof err);
        if (!line) {
            if (i < count || *err) fprintf(stderr, "steward logs: %s\n", *err ? err : "cut short");
            return i < count || *err ? 1 : 0;
        }
        print_record(cli, line, color);
        if (cli->follow && i + 1 >= count && fflush(stdout) != 0) return 0; /* reader gone */
    }
    return 0;
}

int sw_cmd_logs(const sw_cli *cli)
{
    char *path = sw_cli_socket_path(cli);
    char *req = path ? logs_request(cli) : NULL;
    if (!req) {
        if (path) fprintf(stderr, "steward logs: out of memory\n");
        free(path);
        return 1;
    }
    char err[512];
    sw_ctl_reader r = {.fd = sw_ctl_connect(path, err, sizeof err)};
    int code = 1;
    size_t count = 0;
    if (r.fd < 0 || sw_ctl_send(r.fd, req, err, sizeof err) != 0)
        fprintf(stderr, "steward logs: %s\n", err);
    else if ((code = read_head(cli, &r, &count)) == 0) code = read_records(cli, &r, count);
    if (r.fd >= 0) close(r.fd);
    free(r.buf);
    free(req);
    free(path);
    fflush(stdout);
    return code;
}
