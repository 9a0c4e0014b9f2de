/* The log (docs/operating.md): formats one record as a text or a JSON line into a buffer (on
 * the stack, moved to the heap for large records, never over LOG_MAX_RECORD bytes) on the
 * caller's thread, and hands it whole to the writer (log_writer.h), after asking the
 * summaries (log_limit.h) whether it goes at all. Every line is one line of valid UTF-8
 * (invalid bytes become U+FFFD, utf8.h) and, in JSON mode, one valid JSON object written by
 * the JSON module (json.h, on Jansson).
 *
 * Text:  HH:MM:SS.mmm LEVEL SERVICE  MSG  key=value key=value
 *        local time; LEVEL padded to 5; SERVICE "-" when NULL; control characters in MSG are
 *        escaped (\n, \t, \xNN); a key or string value is quoted ("a b", with \" \\ \n escapes)
 *        when it is empty or holds a space, '"', '=', '\' or a character that needs escaping.
 * JSON:  {"ts":"<UTC ISO-8601 with ms>","level":"info","msg":…,"service":…,<fields>}
 *        "service" is left out when NULL; a field named ts, level, msg or service is written
 *        as "fields.<key>" (as logrus does) so it never shadows the record's own keys; a key
 *        given twice keeps its first place and its last value; numbers that JSON cannot hold
 *        (NaN, ±inf) are written as null.
 * Truncation: a record that would pass LOG_MAX_RECORD is cut at a character boundary with "…"
 * (inside a string value, which stays closed; a JSON object or list that does not fit becomes
 * "…"); the fields after the cut are dropped, and a JSON record gets "truncated":true. */
#include "log.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "log_files.h"
#include "log_format.h"
#include "log_limit.h"
#include "log_record.h"
#include "log_ring.h"
#include "log_writer.h"


struct sw_log {
    bool json, color;
    sw_log_level min;
    int64_t flush_timeout;
    sw_log_writer *writer;
    sw_log_limit *limit; /* NULL: no summaries */
    sw_log_ring *ring;   /* NULL: no rings */
    sw_log_files *files; /* NULL: no files */
};


bool sw_log_enabled(const sw_log *log, sw_log_level level) { return log && level >= log->min; }

uint64_t sw_log_dropped(sw_log *log)
{
    return log && log->writer ? sw_log_writer_stats_of(log->writer).dropped : 0;
}

int sw_log_level_parse(const char *name)
{
    if (!name) return -1;
    if (strcasecmp(name, "debug") == 0) return SW_LOG_DEBUG;
    if (strcasecmp(name, "info") == 0) return SW_LOG_INFO;
    if (strcasecmp(name, "warn") == 0 || strcasecmp(name, "warning") == 0) return SW_LOG_WARN;
    if (strcasecmp(name, "error") == 0) return SW_LOG_ERROR;
    return -1;
}

/* ---- writing ---- */

/* The record's line into b (free it with sw_log_line_free), in the log's style at wall_ns. */
static void format_record(const sw_log *log, lbuf *b, int64_t wall_ns, sw_log_level level,
                          const char *service, const char *msg, const sw_log_field *fields,
                          size_t n_fields)
{
    sw_log_style st = {.json = log->json, .color = log->color, .wall_ns = wall_ns};
    sw_log_format(b, &st, level, service, msg, fields, n_fields);
}

/* The length of a dated text line's "YYYY-MM-DD " (what the short time leaves out). */
static size_t date_prefix(const lbuf *b)
{
    const char *sp = memchr(b->p, ' ', b->len);
    return sp ? (size_t)(sp - b->p) + 1 : 0;
}

/* Keeps the record in its service's ring, in the rings' form (log_record.h). */
static void ring_record(sw_log *log, int64_t wall, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields)
{
    char stack[LOG_STACK_BUF];
    size_t n = sw_log_record_encode(stack, sizeof stack, level, msg, fields, n_fields);
    char *p = n <= sizeof stack ? stack : malloc(n);
    if (p == stack || (p && sw_log_record_encode(p, n, level, msg, fields, n_fields) == n))
        sw_log_ring_put(log->ring, wall, service, p, n);
    if (p != stack) free(p);
}

/* Writes one record to stderr and keeps it (rings, files). The files get the line in the
 * log's format with the date; stderr the same line (JSON), or (text) that line less its date
 * unless stderr has colours. */
static void write_kept(sw_log *log, int64_t wall, sw_log_level level, const char *service,
                       const char *msg, const sw_log_field *fields, size_t n_fields)
{
    if (log->ring) ring_record(log, wall, level, service, msg, fields, n_fields);
    lbuf b;
    sw_log_style st = {.json = log->json, .date = true, .wall_ns = wall};
    sw_log_format(&b, &st, level, service, msg, fields, n_fields);
    if (b.len == 0) return;
    if (log->color) {
        lbuf c;
        format_record(log, &c, wall, level, service, msg, fields, n_fields);
        if (c.len > 0) sw_log_writer_put(log->writer, c.p, c.len);
        sw_log_line_free(&c);
    } else {
        size_t skip = log->json ? 0 : date_prefix(&b);
        sw_log_writer_put(log->writer, b.p + skip, b.len - skip);
    }
    sw_log_files_put(log->files, service, b.p, b.len);
    sw_log_line_free(&b);
}

/* Formats and writes one record, past the summaries. */
static void write_record(sw_log *log, sw_log_level level, const char *service, const char *msg,
                         const sw_log_field *fields, size_t n_fields)
{
    int64_t wall = sw_log_wall_ns();
    if (log->ring || log->files) {
        write_kept(log, wall, level, service, msg, fields, n_fields);
        return;
    }
    lbuf b;
    format_record(log, &b, wall, level, service, msg, fields, n_fields);
    if (b.len > 0) sw_log_writer_put(log->writer, b.p, b.len);
    sw_log_line_free(&b);
}

/* "N similar records suppressed", at the level of the records, with their service, message
 * and identity. */
static void write_summary(void *arg, const sw_log_summary *s)
{
    sw_log *log = arg;
    char msg[64];
    snprintf(msg, sizeof msg, "%llu similar records suppressed", (unsigned long long)s->suppressed);
    sw_log_field f[4];
    size_t n = 0;
    f[n++] = (sw_log_field){.key = "suppressed", .type = SW_LF_INT, .i = (int64_t)s->suppressed};
    f[n++] = (sw_log_field){.key = "message", .type = SW_LF_STR, .s = s->msg};
    if (s->reason) f[n++] = (sw_log_field){.key = "reason", .type = SW_LF_STR, .s = s->reason};
    if (s->error) f[n++] = (sw_log_field){.key = "error", .type = SW_LF_STR, .s = s->error};
    write_record(log, s->level, s->service, msg, f, n);
}

/* The writer's tick: the summaries of the windows that ended. */
static int64_t on_tick(void *arg, int64_t now)
{
    sw_log *log = arg;
    return log->limit ? sw_log_limit_expire(log->limit, now, false, write_summary, log) : 0;
}

/* The writer's notice, "N log lines dropped" (a host warning), into out. */
static size_t drop_notice(void *arg, uint64_t dropped, char *out, size_t cap)
{
    const sw_log *log = arg;
    char msg[64];
    snprintf(msg, sizeof msg, "%llu log lines dropped", (unsigned long long)dropped);
    sw_log_field f = {.key = "dropped", .type = SW_LF_INT, .i = (int64_t)dropped};
    lbuf b;
    format_record(log, &b, sw_log_wall_ns(), SW_LOG_WARN, NULL, msg, &f, 1);
    size_t n = b.len <= cap ? b.len : 0;
    memcpy(out, b.p, n);
    sw_log_line_free(&b);
    return n;
}

/* ---- the log ---- */

sw_log_options sw_log_defaults(bool json, sw_log_level min_level, bool color)
{
    return (sw_log_options){.json = json,
                            .color = color,
                            .min_level = min_level,
                            .mode = SW_LOG_AUTO,
                            .buffer_bytes = SW_LOG_BUFFER_BYTES,
                            .flush_timeout_ns = SW_LOG_FLUSH_TIMEOUT_NS,
                            .burst = SW_LOG_BURST,
                            .window_ns = SW_LOG_WINDOW_NS};
}

/* AUTO: a regular file (which never pushes back, and whose readers expect each line written
 * when the call returns) is written directly; pipes, sockets and terminals are buffered. */
static bool buffered_for(FILE *out, sw_log_mode mode)
{
    if (mode != SW_LOG_AUTO) return mode == SW_LOG_BUFFERED;
    struct stat st;
    int fd = fileno(out);
    return fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
}

sw_log *sw_log_open(FILE *out, const sw_log_options *o)
{
    sw_log *log = calloc(1, sizeof *log);
    if (!log) return NULL;
    out = out ? out : stderr;
    log->json = o->json;
    log->color = o->color && !o->json;
    log->min = o->min_level;
    log->flush_timeout = o->flush_timeout_ns;
    if (o->burst > 0) log->limit = sw_log_limit_new(o->burst, o->window_ns);
    sw_log_writer_config wc = {.out = out,
                               .buffered = buffered_for(out, o->mode),
                               .capacity = o->buffer_bytes,
                               .notice = drop_notice,
                               .tick = on_tick,
                               .arg = log};
    if (o->burst == 0 || log->limit) log->writer = sw_log_writer_new(&wc);
    if (!log->writer) {
        sw_log_limit_free(log->limit);
        free(log);
        return NULL;
    }
    return log;
}

sw_log *sw_log_new(FILE *out, bool json, sw_log_level min_level, bool color)
{
    sw_log_options o = sw_log_defaults(json, min_level, color);
    return sw_log_open(out, &o);
}

/* The files' drop notice, in the files' format (dated text, or JSON). */
static size_t files_notice(void *arg, uint64_t dropped, char *out, size_t cap)
{
    const sw_log *log = arg;
    char msg[64];
    snprintf(msg, sizeof msg, "%llu log lines dropped", (unsigned long long)dropped);
    sw_log_field f = {.key = "dropped", .type = SW_LF_INT, .i = (int64_t)dropped};
    sw_log_style st = {.json = log->json, .date = true, .wall_ns = sw_log_wall_ns()};
    lbuf b;
    sw_log_format(&b, &st, SW_LOG_WARN, NULL, msg, &f, 1);
    size_t n = b.len <= cap ? b.len : 0;
    memcpy(out, b.p, n);
    sw_log_line_free(&b);
    return n;
}

int sw_log_start_keeping(sw_log *log, const sw_log_keep *k, char *err, size_t errlen)
{
    if (k->ring_lines > 0 && !(log->ring = sw_log_ring_new(k->ring_lines, k->ring_bytes))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (k->dir && !(log->files = sw_log_files_open(k->dir, k->max_size, k->max_files, files_notice,
                                                   log, err, errlen)))
        return -1;
    return 0;
}

sw_log_ring *sw_log_rings(const sw_log *log) { return log ? log->ring : NULL; }

void sw_log_free(sw_log *log)
{
    if (!log) return;
    if (log->limit) sw_log_limit_expire(log->limit, sw_log_clock_ns(), true, write_summary, log);
    sw_log_writer_free(log->writer, log->flush_timeout); /* its ticks may still write records */
    sw_log_files_free(log->files, log->flush_timeout);
    sw_log_ring_free(log->ring);
    sw_log_limit_free(log->limit);
    free(log);
}

bool sw_log_flush(sw_log *log, int64_t timeout_ns)
{
    if (!log) return true;
    if (log->limit) sw_log_limit_expire(log->limit, sw_log_clock_ns(), true, write_summary, log);
    bool files = sw_log_files_flush(log->files, timeout_ns);
    return sw_log_writer_flush(log->writer, timeout_ns) && files;
}

void sw_log_write(sw_log *log, sw_log_level level, const char *service, const char *msg,
                  const sw_log_field *fields, size_t n_fields)
{
    if ((unsigned)level > SW_LOG_ERROR) level = SW_LOG_ERROR; /* never index out of the tables */
    if (!log || level < log->min) return;
    if (!msg) msg = "";
    if (!fields) n_fields = 0;
    if (log->limit && !sw_log_limit_exempt(log->limit, level)) {
        sw_log_summary before[2];
        size_t n_before;
        int64_t wake;
        bool pass = sw_log_limit_check(log->limit, sw_log_clock_ns(), level, service, msg, fields,
                                       n_fields, before, &n_before, &wake);
        for (size_t i = 0; i < n_before; i++) {
            write_summary(log, &before[i]);
            sw_log_summary_clear(&before[i]);
        }
        if (wake) sw_log_writer_wake_at(log->writer, wake);
        if (!pass) return;
    }
    write_record(log, level, service, msg, fields, n_fields);
}
