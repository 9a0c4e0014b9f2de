/* The rings' record form (log_record.h). Layout, all numbers in the host's byte order (the
 * form never leaves the process):
 *   u8 level, u16 n_fields, str msg, then per field: u8 type, str key, the value:
 *   STR/JSON a str (JSON: its compact text), INT an int64, NUM a double, BOOL a u8;
 *   a str is a u32 length and the bytes with a NUL after them. */
#include "log_record.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_FIELDS 1024 /* a record with more fields is cut there */

typedef struct writer {
    char *p;
    size_t cap, len;
} writer;

static void put(writer *w, const void *v, size_t n)
{
    if (w->len + n <= w->cap) memcpy(w->p + w->len, v, n);
    w->len += n;
}

static void put_str(writer *w, const char *s, size_t n)
{
    if (n > SW_LOG_RECORD_MAX) n = SW_LOG_RECORD_MAX;
    uint32_t len = (uint32_t)n;
    put(w, &len, sizeof len);
    put(w, s, n);
    put(w, "", 1);
}

static void put_value(writer *w, const sw_log_field *f)
{
    switch (f->type) {
    case SW_LF_STR: {
        const char *s = f->s ? f->s : "";
        put_str(w, s, strlen(s));
        break;
    }
    case SW_LF_INT: put(w, &f->i, sizeof f->i); break;
    case SW_LF_NUM: put(w, &f->d, sizeof f->d); break;
    case SW_LF_BOOL: put(w, &(uint8_t){f->b}, 1); break;
    case SW_LF_JSON: {
        size_t len;
        char *text = sw_json_dump(f->j ? f->j : json_null(), false, &len);
        put_str(w, text ? text : "null", text ? len : 4);
        free(text);
        break;
    }
    }
}

size_t sw_log_record_encode(char *buf, size_t cap, sw_log_level level, const char *msg,
                            const sw_log_field *fields, size_t n_fields)
{
    writer w = {buf, cap, 0};
    uint16_t n = 0;
    for (size_t i = 0; i < n_fields && i < MAX_FIELDS; i++) n++;
    put(&w, &(uint8_t){(uint8_t)level}, 1);
    size_t count_at = w.len;
    put(&w, &n, sizeof n);
    put_str(&w, msg ? msg : "", msg ? strlen(msg) : 0);
    uint16_t kept = 0;
    for (; kept < n && w.len < SW_LOG_RECORD_MAX; kept++) {
        const sw_log_field *f = &fields[kept];
        put(&w, &(uint8_t){(uint8_t)f->type}, 1);
        put_str(&w, f->key ? f->key : "", f->key ? strlen(f->key) : 0);
        put_value(&w, f);
    }
    if (kept != n && count_at + sizeof kept <= cap) memcpy(buf + count_at, &kept, sizeof kept);
    return w.len;
}

/* ---- reading ---- */

typedef struct reader {
    const char *p;
    size_t n, at;
    bool bad;
} reader;

static void get(reader *r, void *v, size_t n)
{
    if (r->bad || r->at + n > r->n) {
        r->bad = true;
        memset(v, 0, n);
        return;
    }
    memcpy(v, r->p + r->at, n);
    r->at += n;
}

static const char *get_str(reader *r, size_t *len)
{
    uint32_t n = 0;
    get(r, &n, sizeof n);
    if (r->bad || r->at + n + 1 > r->n) {
        r->bad = true;
        return "";
    }
    const char *s = r->p + r->at;
    r->at += (size_t)n + 1;
    if (len) *len = n;
    return s;
}

static void get_field(reader *r, sw_log_field *f)
{
    uint8_t type = 0;
    get(r, &type, 1);
    *f = (sw_log_field){.type = (sw_log_ftype)type, .key = get_str(r, NULL)};
    size_t len;
    switch (f->type) {
    case SW_LF_STR: f->s = get_str(r, NULL); break;
    case SW_LF_INT: get(r, &f->i, sizeof f->i); break;
    case SW_LF_NUM: get(r, &f->d, sizeof f->d); break;
    case SW_LF_BOOL: {
        uint8_t b = 0;
        get(r, &b, 1);
        f->b = b != 0;
        break;
    }
    case SW_LF_JSON: {
        const char *text = get_str(r, &len);
        f->j = r->bad ? NULL : sw_json_parse(text, len, 1000, NULL, 0);
        break;
    }
    default: r->bad = true;
    }
}

void sw_log_record_json(lbuf *out, const char *p, size_t n, const char *service, int64_t wall_ns)
{
    reader r = {p, n, 0, false};
    uint8_t level = 0;
    uint16_t n_fields = 0;
    get(&r, &level, 1);
    get(&r, &n_fields, sizeof n_fields);
    const char *msg = get_str(&r, NULL);
    sw_log_field stack[32];
    sw_log_field *f = n_fields <= 32 ? stack : calloc(n_fields, sizeof *f);
    size_t got = 0;
    while (f && got < n_fields && !r.bad) get_field(&r, &f[got++]);
    sw_log_style st = {.json = true, .wall_ns = wall_ns};
    if (!r.bad && f && level <= SW_LOG_ERROR)
        sw_log_format(out, &st, (sw_log_level)level, service, msg, f, got);
    else *out = (lbuf){.p = out->stack, .len = 0, .cap = sizeof out->stack};
    for (size_t i = 0; i < got; i++)
        if (f[i].type == SW_LF_JSON) json_decref(f[i].j);
    if (f != stack) free(f);
}
