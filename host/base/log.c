/* The log writer (DESIGN §7): formats one record as a text or a JSON line into a buffer (on the
 * stack, moved to the heap for large records, never over LOG_MAX_RECORD bytes) and writes it
 * with one write() under the log's mutex. Owns the escaping rules: every line is one line of
 * valid UTF-8 (invalid bytes become U+FFFD) and, in JSON mode, one valid JSON object.
 *
 * Text:  HH:MM:SS.mmm LEVEL SERVICE  MSG  key=value key=value
 *        local time; LEVEL padded to 5; SERVICE "-" when NULL; control characters in MSG are
 *        escaped (\n, \t, \xNN); a key or string value is quoted ("a b", with \" \\ \n escapes)
 *        when it is empty or holds a space, '"', '=', '\' or a character that needs escaping.
 * JSON:  {"ts":"<UTC ISO-8601 with ms>","level":"info","msg":…,"service":…,<fields>}
 *        "service" is left out when NULL; a field named ts, level, msg or service is written
 *        as "fields.<key>" (as logrus does) so it never shadows the record's own keys;
 *        numbers that JSON cannot hold (NaN, ±inf) are written as null.
 * Truncation: a record that would pass LOG_MAX_RECORD is cut at a character boundary with "…"
 * (inside a string value, which stays closed); the fields after the cut are dropped, and a
 * JSON record gets "truncated":true. */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LOG_STACK_BUF 4096
#define LOG_MAX_RECORD 65536 /* a line never exceeds this, newline included */
#define LOG_RESERVE 64       /* kept free for the truncation mark and the line's end */
#define ELLIPSIS "\xE2\x80\xA6"
#define REPLACEMENT "\xEF\xBF\xBD"

struct sw_log {
    FILE *out;
    bool json, color;
    sw_log_level min;
    pthread_mutex_t lock;
};

static const char *const level_upper[] = {"DEBUG", "INFO", "WARN", "ERROR"};
static const char *const level_pad[] = {"DEBUG ", "INFO  ", "WARN  ", "ERROR "}; /* padded to 5, then a space */
static const char *const level_lower[] = {"debug", "info", "warn", "error"};
static const char *const level_color[] = {"\x1b[90m", "\x1b[32m", "\x1b[33m", "\x1b[1;31m"};

sw_log *sw_log_new(FILE *out, bool json, sw_log_level min_level, bool color)
{
    sw_log *log = calloc(1, sizeof *log);
    if (!log) return NULL;
    log->out = out ? out : stderr;
    log->json = json;
    log->color = color && !json;
    log->min = min_level;
    pthread_mutex_init(&log->lock, NULL);
    return log;
}

void sw_log_free(sw_log *log)
{
    if (!log) return;
    pthread_mutex_destroy(&log->lock);
    free(log);
}

bool sw_log_enabled(const sw_log *log, sw_log_level level)
{
    return log && level >= log->min;
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

/* ---- the record buffer ---- */

typedef struct lbuf {
    char *p;
    size_t len, cap;
    bool heap;
    bool cut;    /* a piece did not fit: the record is being truncated */
    bool marked; /* the "…" of the cut is written */
} lbuf;

/* Makes room for n more bytes. Pieces of the record may use up to LOG_MAX_RECORD - LOG_RESERVE;
 * the closing pieces (tail = true) may use the reserve. False when there is no room. */
static bool room(lbuf *b, size_t n, bool tail)
{
    size_t limit = tail ? LOG_MAX_RECORD : LOG_MAX_RECORD - LOG_RESERVE;
    if (b->len + n > limit) return false;
    if (b->len + n <= b->cap) return true;
    size_t cap = b->cap * 2;
    while (cap < b->len + n) cap *= 2;
    if (cap > LOG_MAX_RECORD) cap = LOG_MAX_RECORD;
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) return false;
    if (!b->heap) memcpy(p, b->p, b->len);
    b->p = p;
    b->cap = cap;
    b->heap = true;
    return true;
}

static bool put(lbuf *b, const char *s, size_t n)
{
    if (b->cut) return false;
    if (!room(b, n, false)) {
        b->cut = true;
        return false;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return true;
}

static bool puts_(lbuf *b, const char *s) { return put(b, s, strlen(s)); }

/* Closing pieces: written even after a cut, into the reserve. */
static void put_tail(lbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (room(b, n, true)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

/* ---- UTF-8 and escaping ---- */

/* Length of the valid UTF-8 sequence at s (1..4) with its code point, or 0 when the byte at s
 * starts no valid sequence (stray continuation, overlong form, surrogate, > U+10FFFF, cut). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    uint32_t v = c & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; i++) v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return len;
}

typedef enum {
    ESC_JSON,     /* inside a JSON string */
    ESC_TEXT,     /* free text (msg, service): control characters only */
    ESC_QUOTED    /* a quoted text value: also '"' and '\' */
} esc_mode;

/* The escaped form of one character (ASCII byte or code point) in mode m, or NULL when it is
 * written as is. buf holds at least 8 bytes. */
static const char *escape_of(uint32_t c, esc_mode m, char *buf)
{
    switch (c) {
    case '"': return m == ESC_TEXT ? NULL : "\\\"";
    case '\\': return m == ESC_TEXT ? NULL : "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return m == ESC_JSON ? "\\b" : "\\x08";
    case '\f': return m == ESC_JSON ? "\\f" : "\\x0c";
    default: break;
    }
    if (c < 0x20) {
        snprintf(buf, 8, m == ESC_JSON ? "\\u%04x" : "\\x%02x", (unsigned)c);
        return buf;
    }
    if (m != ESC_JSON && c == 0x7F) return "\\x7f";
    /* C1 controls (CSI is one) would reach a terminal raw in text mode. */
    if (m != ESC_JSON && c >= 0x80 && c <= 0x9F) {
        snprintf(buf, 8, "\\u%04x", (unsigned)c);
        return buf;
    }
    return NULL;
}

/* Writes s escaped for mode m. On a cut, ends with "…" (the caller closes any quote). */
static void put_escaped(lbuf *b, const char *s, size_t n, esc_mode m)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    char tmp[8];
    while (i < n && !b->cut) {
        /* a run of plain ASCII goes in one piece, cut at the limit if need be */
        size_t j = i;
        while (j < n && u[j] >= 0x20 && u[j] < 0x7F && !(m != ESC_TEXT && (u[j] == '"' || u[j] == '\\'))) j++;
        if (j > i) {
            size_t want = j - i;
            size_t avail = LOG_MAX_RECORD - LOG_RESERVE - b->len;
            if (want > avail) {
                if (avail && room(b, avail, false)) {
                    memcpy(b->p + b->len, s + i, avail);
                    b->len += avail;
                }
                b->cut = true;
                break;
            }
            put(b, s + i, want);
            i = j;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len == 0) {
            put(b, REPLACEMENT, 3);
            i++;
            continue;
        }
        const char *e = escape_of(cp, m, tmp);
        if (e) put(b, e, strlen(e));
        else put(b, s + i, len);
        i += len;
    }
    if (b->cut && !b->marked) {
        put_tail(b, ELLIPSIS);
        b->marked = true;
    }
}

/* A JSON string, closed even when cut. The caller has made room for its opening quote. */
static void put_json_string(lbuf *b, const char *s, size_t n)
{
    if (!put(b, "\"", 1)) return;
    put_escaped(b, s, n, ESC_JSON);
    if (b->cut) put_tail(b, "\"");
    else put(b, "\"", 1);
}

/* A text key or value: bare when safe, quoted with escapes otherwise. */
static bool text_needs_quotes(const char *s, size_t n)
{
    if (n == 0) return true;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c == ' ' || c == '"' || c == '=' || c == '\\' || c < 0x20 || c == 0x7F) return true;
        if (c < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len == 0 || cp <= 0x9F) return true;
        i += len;
    }
    return false;
}

static void put_text_token(lbuf *b, const char *s, size_t n)
{
    if (!text_needs_quotes(s, n)) {
        put_escaped(b, s, n, ESC_TEXT);
        return;
    }
    put(b, "\"", 1);
    put_escaped(b, s, n, ESC_QUOTED);
    if (b->cut) put_tail(b, "\"");
    else put(b, "\"", 1);
}

/* Raw JSON: copied whole or not at all, with control bytes turned into spaces and invalid
 * UTF-8 into U+FFFD, so valid JSON stays valid and the record stays on one line. */
static bool put_raw_json(lbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), need = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        need += len ? len : 3;
        i += len ? len : 1;
    }
    if (b->cut || !room(b, need, false)) {
        b->cut = true;
        return false;
    }
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len == 0) {
            memcpy(b->p + b->len, REPLACEMENT, 3);
            b->len += 3;
            i++;
        } else {
            if (len == 1 && (u[i] < 0x20 || u[i] == 0x7F)) b->p[b->len++] = ' ';
            else {
                memcpy(b->p + b->len, s + i, len);
                b->len += len;
            }
            i += len;
        }
    }
    return true;
}

/* Shortest "%.Ng" that reads back as d (finite d only). */
static int format_double(char *out, size_t size, double d)
{
    int n = snprintf(out, size, "%.15g", d);
    if (strtod(out, NULL) != d) n = snprintf(out, size, "%.17g", d);
    return n;
}

/* Decimal digits of v into out (at least 21 bytes); its length. */
static int format_int(char *out, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do tmp[n++] = (char)('0' + u % 10); while (u /= 10);
    int len = 0;
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    out[len] = 0;
    return len;
}

/* The value of a number, boolean or int field as text; NaN/inf as JSON null in JSON mode. */
static int format_scalar(char *out, size_t size, const sw_log_field *f, bool json)
{
    switch (f->type) {
    case SW_LF_INT: return format_int(out, f->i);
    case SW_LF_BOOL: return snprintf(out, size, "%s", f->b ? "true" : "false");
    default:
        if (isfinite(f->d)) return format_double(out, size, f->d);
        if (json) return snprintf(out, size, "null");
        return snprintf(out, size, "%s", isnan(f->d) ? "nan" : f->d > 0 ? "inf" : "-inf");
    }
}

/* ---- the two formats ---- */

/* The clock part of a line: local "HH:MM:SS.mmm" (text) or UTC "YYYY-MM-DDTHH:MM:SS.mmm"
 * (JSON). Formatting a date is the costly part of a log line, so each thread keeps the text of
 * the current second and adds only the milliseconds. */
typedef struct second_text {
    time_t sec;
    bool valid;
    char text[32];
    size_t len;
} second_text;

static void put_time(lbuf *b, bool utc)
{
    static _Thread_local second_text cache[2];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    second_text *c = &cache[utc];
    if (!c->valid || c->sec != ts.tv_sec) {
        struct tm tm;
        if (utc) gmtime_r(&ts.tv_sec, &tm);
        else localtime_r(&ts.tv_sec, &tm);
        int n = utc ? snprintf(c->text, sizeof c->text, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                               tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
                    : snprintf(c->text, sizeof c->text, "%02d:%02d:%02d.", tm.tm_hour, tm.tm_min, tm.tm_sec);
        c->len = n > 0 ? (size_t)n : 0;
        c->sec = ts.tv_sec;
        c->valid = true;
    }
    long ms = ts.tv_nsec / 1000000L;
    char digits[3] = {(char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10)};
    put(b, c->text, c->len);
    put(b, digits, 3);
}

static void format_text(const sw_log *log, lbuf *b, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields)
{
    put_time(b, false);
    put(b, " ", 1);
    if (log->color) {
        puts_(b, level_color[level]);
        puts_(b, level_upper[level]);
        puts_(b, "\x1b[0m");
        puts_(b, level_pad[level] + strlen(level_upper[level]));
    } else puts_(b, level_pad[level]);
    if (service) put_escaped(b, service, strlen(service), ESC_TEXT);
    else put(b, "-", 1);
    put(b, "  ", 2);
    put_escaped(b, msg, strlen(msg), ESC_TEXT);
    for (size_t i = 0; i < n_fields && !b->cut; i++) {
        const sw_log_field *f = &fields[i];
        const char *key = f->key ? f->key : "";
        put(b, i == 0 ? "  " : " ", i == 0 ? 2 : 1);
        put_text_token(b, key, strlen(key));
        put(b, "=", 1);
        if (f->type == SW_LF_STR) {
            const char *s = f->s ? f->s : "";
            put_text_token(b, s, strlen(s));
        } else if (f->type == SW_LF_JSON) {
            put_raw_json(b, f->s ? f->s : "null");
        } else {
            char num[40];
            int k = format_scalar(num, sizeof num, f, false);
            put(b, num, (size_t)k);
        }
    }
    if (b->cut && !b->marked) put_tail(b, ELLIPSIS);
    put_tail(b, "\n");
}

static bool reserved_json_key(const char *k)
{
    return strcmp(k, "ts") == 0 || strcmp(k, "level") == 0 || strcmp(k, "msg") == 0 ||
           strcmp(k, "service") == 0;
}

static void format_json(lbuf *b, sw_log_level level, const char *service, const char *msg,
                        const sw_log_field *fields, size_t n_fields)
{
    put(b, "{\"ts\":\"", 7);
    put_time(b, true);
    put(b, "Z\",\"level\":\"", 12);
    puts_(b, level_lower[level]);
    put(b, "\",\"msg\":", 8);
    put_json_string(b, msg, strlen(msg));
    if (service && !b->cut && room(b, 16, false)) {
        put(b, ",\"service\":", 11);
        put_json_string(b, service, strlen(service));
    }
    for (size_t i = 0; i < n_fields && !b->cut; i++) {
        const sw_log_field *f = &fields[i];
        const char *key = f->key ? f->key : "";
        size_t mark = b->len;
        char num[40];
        int k = 0;
        if (f->type != SW_LF_STR && f->type != SW_LF_JSON) k = format_scalar(num, sizeof num, f, true);
        /* key and a number or the start of a string must fit together: never a dangling key */
        if (!room(b, strlen(key) * 6 + 16 + (size_t)k, false)) {
            b->cut = true;
            break;
        }
        put(b, ",\"", 2);
        if (reserved_json_key(key)) put(b, "fields.", 7);
        put_escaped(b, key, strlen(key), ESC_JSON);
        if (b->cut) { /* a key too long to finish: drop the whole field */
            b->len = mark;
            break;
        }
        put(b, "\":", 2);
        if (f->type == SW_LF_STR) {
            const char *s = f->s ? f->s : "";
            put_json_string(b, s, strlen(s));
        } else if (f->type == SW_LF_JSON) {
            if (!put_raw_json(b, f->s ? f->s : "null")) put_tail(b, "\"" ELLIPSIS "\"");
        } else put(b, num, (size_t)k);
    }
    if (b->cut) put_tail(b, ",\"truncated\":true");
    put_tail(b, "}\n");
}

/* ---- writing ---- */

static void emit(sw_log *log, const char *p, size_t n)
{
    pthread_mutex_lock(&log->lock);
    int fd = fileno(log->out);
    if (fd < 0) { /* a FILE without a descriptor (fmemopen, cookies) */
        fwrite(p, 1, n, log->out);
        fflush(log->out);
    } else {
        while (n > 0) {
            ssize_t w = write(fd, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                break; /* dropped: a log write never fails visibly */
            }
            p += w;
            n -= (size_t)w;
        }
    }
    pthread_mutex_unlock(&log->lock);
}

void sw_log_write(sw_log *log, sw_log_level level, const char *service, const char *msg,
                  const sw_log_field *fields, size_t n_fields)
{
    if ((unsigned)level > SW_LOG_ERROR) level = SW_LOG_ERROR; /* never index out of the tables */
    if (!log || level < log->min) return;
    if (!msg) msg = "";
    if (!fields) n_fields = 0;
    char stack[LOG_STACK_BUF];
    lbuf b = {.p = stack, .len = 0, .cap = sizeof stack, .heap = false, .cut = false, .marked = false};
    if (log->json) format_json(&b, level, service, msg, fields, n_fields);
    else format_text(log, &b, level, service, msg, fields, n_fields);
    emit(log, b.p, b.len);
    if (b.heap) free(b.p);
}
