/* UTF-8 validation and repair (see utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

size_t sw_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
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

size_t sw_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) { /* ASCII runs are the common case */
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = sw_utf8_seq(u + i, n - i, &cp);
        if (len == 0) return i;
        i += len;
    }
    return n;
}

char *sw_utf8_fix(const char *s, size_t n, size_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t need = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sw_utf8_seq(u + i, n - i, &cp);
        need += k ? k : 3;
        i += k ? k : 1;
    }
    char *out = malloc(need + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sw_utf8_seq(u + i, n - i, &cp);
        if (k) memcpy(out + o, s + i, k);
        else memcpy(out + o, SW_UTF8_REPLACEMENT, 3);
        o += k ? k : 3;
        i += k ? k : 1;
    }
    out[o] = '\0';
    *len = o;
    return out;
}
