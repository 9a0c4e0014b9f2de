/* Formatting one log record as one line (see log.c for the formats): text or JSON, valid
 * UTF-8, never over LOG_MAX_RECORD bytes, truncated with a mark. No state, no I/O. */
#include "log_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "timefmt.h"
#include "utf8.h"

#define LOG_MAX_RECORD 65536 /* a line never exceeds this, newline included */
#define LOG_RESERVE    64    /* kept free for the truncation mark and the line's end */
#define ELLIPSIS       "\xE2\x80\xA6"

static const char *const level_upper[] = {"DEBUG", "INFO", "WARN", "ERROR"};
static const char *const level_pad[] = {"DEBUG ", "INFO  ", "WARN  ",
                                        "ERROR "}; /* padded to 5, then a space */
static const char *const level_lower[] = {"debug", "info", "warn", "error"};
static const char *const level_color[] = {"\x1b[90m", "\x1b[32m", "\x1b[33m", "\x1b[1;31m"};

/* ---- the record buffer ---- */


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

/* ---- text escaping ---- */

typedef enum {
    ESC_TEXT,  /* free text (msg, service): control characters only */
    ESC_QUOTED /* a quoted text value: also '"' and '\' */
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
    default: break;
    }
    if (c < 0x20 || c == 0x7F) {
        snprintf(buf, 8, "\\x%02x", (unsigned)c);
        return buf;
    }
    /* C1 controls (CSI is one) would reach a terminal raw. */
    if (c >= 0x80 && c <= 0x9F) {
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
        while (j < n && u[j] >= 0x20 && u[j] < 0x7F &&
               !(m != ESC_TEXT && (u[j] == '"' || u[j] == '\\')))
            j++;
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
        size_t len = sw_utf8_seq(u + i, n - i, &cp);
        if (len == 0) {
            put(b, SW_UTF8_REPLACEMENT, 3);
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
        size_t len = sw_utf8_seq(u + i, n - i, &cp);
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

/* A JSON field's compact text (one line: JSON text has no raw control characters), whole or
 * not at all. */
static void put_json_text(lbuf *b, const json_t *v)
{
    size_t len;
    char *text = sw_json_dump(v ? v : json_null(), false, &len);
    if (!text) b->cut = true;
    else put(b, text, len);
    free(text);
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
    do tmp[n++] = (char)('0' + u % 10);
    while (u /= 10);
    int len = 0;
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    out[len] = 0;
    return len;
}

/* The value of a number, boolean or int field as text. */
static int format_scalar(char *out, size_t size, const sw_log_field *f)
{
    switch (f->type) {
    case SW_LF_INT: return format_int(out, f->i);
    case SW_LF_BOOL: return snprintf(out, size, "%s", f->b ? "true" : "false");
    default:
        if (isfinite(f->d)) return format_double(out, size, f->d);
        return snprintf(out, size, "%s", isnan(f->d) ? "nan" : f->d > 0 ? "inf" : "-inf");
    }
}

/* ---- the clock ---- */

/* The clock part of a line into out (32 bytes) for the wall time wall_ns: local
 * "HH:MM:SS.mmm" (text), local "YYYY-MM-DD HH:MM:SS.mmm" (text with the date) or UTC
 * "YYYY-MM-DDTHH:MM:SS.mmmZ" (JSON); its length. Formatting a date is the costly part of a
 * log line, so each thread keeps the text of the current second and adds the milliseconds. */
typedef struct second_text {
    time_t sec;
    bool valid;
    char text[32];
    size_t len;
} second_text;

typedef enum { STAMP_SHORT, STAMP_DATE, STAMP_UTC } clock_style;

static size_t second_of(second_text *c, time_t sec, clock_style style)
{
    struct tm tm;
    if (style == STAMP_UTC) gmtime_r(&sec, &tm);
    else localtime_r(&sec, &tm);
    int n =
        style == STAMP_SHORT
            ? snprintf(c->text, sizeof c->text, "%02d:%02d:%02d.", tm.tm_hour, tm.tm_min, tm.tm_sec)
            : snprintf(c->text, sizeof c->text, "%04d-%02d-%02d%c%02d:%02d:%02d.",
                       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, style == STAMP_UTC ? 'T' : ' ',
                       tm.tm_hour, tm.tm_min, tm.tm_sec);
    return n > 0 && (size_t)n < sizeof c->text - 4 ? (size_t)n : 0;
}

static size_t clock_text(char *out, clock_style style, int64_t wall_ns)
{
    static _Thread_local second_text cache[3];
    time_t sec = (time_t)(wall_ns / 1000000000);
    second_text *c = &cache[style];
    if (!c->valid || c->sec != sec) {
        c->len = second_of(c, sec, style);
        c->sec = sec;
        c->valid = true;
    }
    long ms = (long)(wall_ns % 1000000000 / 1000000);
    size_t n = c->len;
    memcpy(out, c->text, n);
    out[n++] = (char)('0' + ms / 100);
    out[n++] = (char)('0' + ms / 10 % 10);
    out[n++] = (char)('0' + ms % 10);
    if (style == STAMP_UTC) out[n++] = 'Z';
    return n;
}

int64_t sw_log_wall_ns(void) { return (int64_t)(sw_wall_now() * 1e9); }

/* ---- text ---- */

static void format_text(const sw_log_style *st, lbuf *b, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields)
{
    bool color = st->color;
    char clock[32];
    put(b, clock, clock_text(clock, st->date ? STAMP_DATE : STAMP_SHORT, st->wall_ns));
    put(b, " ", 1);
    if (color) {
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
            put_json_text(b, f->j);
        } else {
            char num[40];
            int k = format_scalar(num, sizeof num, f);
            put(b, num, (size_t)k);
        }
    }
    if (b->cut && !b->marked) put_tail(b, ELLIPSIS);
    put_tail(b, "\n");
}

/* ---- JSON ---- */

static bool reserved_json_key(const char *k)
{
    return strcmp(k, "ts") == 0 || strcmp(k, "level") == 0 || strcmp(k, "msg") == 0 ||
           strcmp(k, "service") == 0;
}

/* A field's value as JSON: a new reference, NULL when memory runs out. */
static json_t *field_value(const sw_log_field *f)
{
    switch (f->type) {
    case SW_LF_STR: return sw_json_str(f->s ? f->s : "");
    case SW_LF_INT: return json_integer((json_int_t)f->i);
    case SW_LF_BOOL: return json_boolean(f->b);
    case SW_LF_JSON: return f->j ? json_incref(f->j) : json_null();
    default: return sw_json_num(f->d);
    }
}

/* The whole record as a JSON object, or NULL when memory runs out. */
static json_t *json_record(int64_t wall_ns, sw_log_level level, const char *service,
                           const char *msg, const sw_log_field *fields, size_t n_fields)
{
    char clock[32];
    size_t clock_len = clock_text(clock, STAMP_UTC, wall_ns);
    json_t *rec = json_object();
    int rc = sw_json_set(rec, "ts", json_stringn_nocheck(clock, clock_len));
    rc |= sw_json_set(rec, "level", json_string_nocheck(level_lower[level]));
    rc |= sw_json_set(rec, "msg", sw_json_str(msg));
    if (service) rc |= sw_json_set(rec, "service", sw_json_str(service));
    for (size_t i = 0; i < n_fields && rc == 0; i++) {
        const char *key = fields[i].key ? fields[i].key : "";
        char renamed[24];
        if (reserved_json_key(key)) {
            snprintf(renamed, sizeof renamed, "fields.%s", key);
            key = renamed;
        }
        rc |= sw_json_set(rec, key, field_value(&fields[i]));
    }
    if (rc == 0) return rec;
    json_decref(rec);
    return NULL;
}

/* What `,"key":value` adds to an object's text (no comma for the first pair). */
static size_t pair_size(const char *key, const json_t *v, bool first, int digits)
{
    json_t *k = json_string_nocheck(key); /* a key of a record: valid UTF-8 already */
    size_t n =
        k ? sw_json_dumpb(k, NULL, 0, digits) + 1 + sw_json_dumpb(v, NULL, 0, digits) + !first
          : LOG_MAX_RECORD;
    json_decref(k);
    return n;
}

/* The text size of s[0..n) as a JSON string. */
static size_t string_size(const char *s, size_t n, int digits)
{
    json_t *v = json_stringn_nocheck(s, n);
    size_t size = v ? sw_json_dumpb(v, NULL, 0, digits) : LOG_MAX_RECORD;
    json_decref(v);
    return size;
}

/* The longest head of the string v, cut at a character boundary and ended by "…", whose text
 * takes at most room bytes; NULL when not even "…" fits. */
static json_t *string_head(const json_t *v, size_t room, int digits)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    size_t lo = 0, hi = n; /* the head of lo bytes fits; find the longest */
    if (string_size(s, 0, digits) + 3 > room) return NULL;
    while (lo < hi) {
        size_t mid = hi - (hi - lo) / 2, k = mid;
        while (k > lo && k < n && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--; /* a character boundary */
        if (k > lo && string_size(s, k, digits) + 3 <= room) lo = k;
        else hi = mid - 1;
    }
    char *head = malloc(lo + 3);
    if (!head) return NULL;
    memcpy(head, s, lo);
    memcpy(head + lo, ELLIPSIS, 3);
    json_t *cut = json_stringn_nocheck(head, lo + 3);
    free(head);
    return cut;
}

/* A record too large for one line: its pairs in order while they fit, then the first that
 * does not, shortened (strings) or replaced by "…" (objects, lists) or left out, and
 * "truncated":true. */
static void format_cut(lbuf *b, json_t *rec, int digits)
{
    json_t *cut = json_object(), *mark = json_true();
    size_t budget = LOG_MAX_RECORD - 1 - pair_size("truncated", mark, false, digits); /* '\n' too */
    size_t used = 2;                                                                  /* {} */
    const char *key;
    json_t *v;
    json_object_foreach(rec, key, v)
    {
        size_t need = pair_size(key, v, used == 2, digits);
        if (used + need <= budget) {
            json_object_set_nocheck(cut, key, v);
            used += need;
            continue;
        }
        size_t head = need - sw_json_dumpb(v, NULL, 0, digits); /* comma, key and colon */
        if (used + head < budget) {
            size_t left = budget - used - head;
            json_t *part = NULL;
            if (json_is_string(v)) part = string_head(v, left, digits);
            else if ((json_is_object(v) || json_is_array(v)) && left >= 5)
                part = json_string_nocheck(ELLIPSIS);
            if (part) json_object_set_new_nocheck(cut, key, part);
        }
        break;
    }
    json_object_set_new_nocheck(cut, "truncated", mark);
    size_t len = sw_json_dumpb(cut, NULL, 0, digits);
    if (len > 0 && room(b, len + 1, true)) {
        sw_json_dumpb(cut, b->p, len, digits);
        b->p[len] = '\n';
        b->len = len + 1;
    }
    json_decref(cut);
}

static void format_json(lbuf *b, int64_t wall_ns, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields)
{
    json_t *rec = json_record(wall_ns, level, service, msg, fields, n_fields);
    if (!rec) return; /* out of memory: the record is dropped */
    int digits = sw_json_digits(rec);
    size_t len = sw_json_dumpb(rec, b->p, b->cap, digits);
    if (len >= LOG_MAX_RECORD) format_cut(b, rec, digits);
    else if (len > 0 && (len < b->cap || (room(b, len + 1, true) &&
                                          sw_json_dumpb(rec, b->p, len, digits) == len))) {
        b->p[len] = '\n';
        b->len = len + 1;
    }
    json_decref(rec);
}


void sw_log_format(lbuf *b, const sw_log_style *st, sw_log_level level, const char *service,
                   const char *msg, const sw_log_field *fields, size_t n_fields)
{
    *b = (lbuf){.p = b->stack, .len = 0, .cap = sizeof b->stack};
    if (st->json) format_json(b, st->wall_ns, level, service, msg, fields, n_fields);
    else format_text(st, b, level, service, msg, fields, n_fields);
}

void sw_log_line_free(lbuf *b)
{
    if (b->heap) free(b->p);
    b->heap = false;
}
