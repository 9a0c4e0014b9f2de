/* JSON text into a growable buffer (see jsonbuf.h). The escaping is stricter than JSON needs
 * so that libyaml, which refuses non-printable characters, reads every reply too. */
#include "jsonbuf.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sw_jbuf_init(sw_jbuf *b) { memset(b, 0, sizeof *b); }

void sw_jbuf_free(sw_jbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static bool reserve(sw_jbuf *b, size_t n)
{
    if (b->oom) return false;
    if (b->len + n + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void sw_jbuf_raw(sw_jbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void sw_jbuf_lit(sw_jbuf *b, const char *s) { sw_jbuf_raw(b, s, strlen(s)); }

/* Length of the valid UTF-8 sequence at s with its code point, or 0 if none starts there. */
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
        if (c == 0xED) hi = 0x9F; /* no surrogates */
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

static bool needs_escape(uint32_t c)
{
    return c < 0x20 || c == '"' || c == '\\' || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == 0xFFFE || c == 0xFFFF;
}

static void put_escape(sw_jbuf *b, uint32_t c)
{
    char tmp[8];
    const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
    if (!e) {
        snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)c);
        e = tmp;
    }
    sw_jbuf_lit(b, e);
}

void sw_jbuf_str(sw_jbuf *b, const char *s)
{
    if (!s) {
        sw_jbuf_lit(b, "null");
        return;
    }
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    sw_jbuf_raw(b, "\"", 1);
    while (i < n) {
        size_t j = i; /* a run of plain ASCII in one copy */
        while (j < n && u[j] >= 0x20 && u[j] < 0x7F && u[j] != '"' && u[j] != '\\') j++;
        if (j > i) {
            sw_jbuf_raw(b, s + i, j - i);
            i = j;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len == 0) {
            sw_jbuf_lit(b, "\xEF\xBF\xBD");
            i++;
        } else {
            if (needs_escape(cp)) put_escape(b, cp);
            else sw_jbuf_raw(b, s + i, len);
            i += len;
        }
    }
    sw_jbuf_raw(b, "\"", 1);
}

void sw_jbuf_int(sw_jbuf *b, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    sw_jbuf_raw(b, tmp, (size_t)n);
}

void sw_jbuf_num(sw_jbuf *b, double v)
{
    if (!isfinite(v)) {
        sw_jbuf_lit(b, "null");
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v) n = snprintf(tmp, sizeof tmp, "%.17g", v);
    sw_jbuf_raw(b, tmp, (size_t)n);
}

void sw_jbuf_key(sw_jbuf *b, const char *key, bool first)
{
    if (!first) sw_jbuf_raw(b, ",", 1);
    sw_jbuf_str(b, key);
    sw_jbuf_raw(b, ":", 1);
}
