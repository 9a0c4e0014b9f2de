/* JSON values, text and parsing on Jansson (see json.h). Jansson does all escaping, number
 * formatting and parsing; this file only repairs UTF-8 before a string reaches it, picks the
 * digits reals are written with, and bounds nesting on the way in. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* ---- values ---- */

json_t *sw_json_strn(const char *s, size_t n)
{
    if (!s) return json_null();
    if (sw_utf8_valid(s, n) == n) return json_stringn_nocheck(s, n);
    size_t len;
    char *fixed = sw_utf8_fix(s, n, &len);
    if (!fixed) return NULL;
    json_t *v = json_stringn_nocheck(fixed, len);
    free(fixed);
    return v;
}

json_t *sw_json_str(const char *s) { return s ? sw_json_strn(s, strlen(s)) : json_null(); }

json_t *sw_json_num(double d)
{
    if (!isfinite(d)) return json_null();
    if (d == floor(d) && fabs(d) < 9007199254740992.0) return json_integer((json_int_t)d);
    return json_real(d);
}

int sw_json_setn(json_t *obj, const char *key, size_t n, json_t *v)
{
    if (sw_utf8_valid(key, n) == n) return json_object_setn_new_nocheck(obj, key, n, v);
    size_t len;
    char *fixed = sw_utf8_fix(key, n, &len);
    if (!fixed) {
        json_decref(v);
        return -1;
    }
    int rc = json_object_setn_new_nocheck(obj, fixed, len, v);
    free(fixed);
    return rc;
}

int sw_json_set(json_t *obj, const char *key, json_t *v)
{
    if (!key) key = "";
    return sw_json_setn(obj, key, strlen(key), v);
}

/* ---- writing ---- */

#define MIN_DIGITS 15
#define MAX_DIGITS 17

/* The fewest digits (15..17) with which %g reads d back. */
static int real_digits(double d)
{
    char text[40];
    for (int p = MIN_DIGITS; p < MAX_DIGITS; p++) {
        snprintf(text, sizeof text, "%.*g", p, d);
        if (strtod(text, NULL) == d) return p;
    }
    return MAX_DIGITS;
}

/* Jansson's iteration calls take no const value; nothing here changes v. */
static int digits_of(json_t *v, int most)
{
    if (most == MAX_DIGITS) return most;
    if (json_is_real(v)) {
        int p = real_digits(json_real_value(v));
        return p > most ? p : most;
    }
    if (json_is_array(v)) {
        for (size_t i = 0, n = json_array_size(v); i < n && most < MAX_DIGITS; i++)
            most = digits_of(json_array_get(v, i), most);
    } else if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it && most < MAX_DIGITS;
             it = json_object_iter_next(v, it))
            most = digits_of(json_object_iter_value(it), most);
    }
    return most;
}

int sw_json_digits(const json_t *v) { return v ? digits_of((json_t *)v, MIN_DIGITS) : MIN_DIGITS; }

static size_t flags_for(const json_t *v, int digits)
{
    if (digits <= 0) digits = sw_json_digits(v);
    if (digits > MAX_DIGITS) digits = MAX_DIGITS;
    return JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(digits);
}

size_t sw_json_dumpb(const json_t *v, char *buf, size_t size, int digits)
{
    if (!v) return 0;
    return json_dumpb(v, buf, size, flags_for(v, digits));
}

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static int add(const char *s, size_t n, void *data)
{
    text *t = data;
    if (t->len + n + 2 > t->cap) { /* room for a newline and the NUL too */
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + n + 2) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) return -1;
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    return 0;
}

char *sw_json_dump(const json_t *v, bool newline, size_t *len)
{
    if (!v) return NULL;
    text t = {0};
    if (json_dump_callback(v, add, &t, flags_for(v, 0)) != 0 || !t.p) {
        free(t.p);
        return NULL;
    }
    if (newline) t.p[t.len++] = '\n';
    t.p[t.len] = '\0';
    if (len) *len = t.len;
    return t.p;
}

/* ---- reading ---- */

/* Whether v nests more than limit arrays and objects deep (v itself counts one). */
static bool too_deep(json_t *v, int limit)
{
    if (!json_is_array(v) && !json_is_object(v)) return false;
    if (limit <= 0) return true;
    if (json_is_array(v)) {
        for (size_t i = 0, n = json_array_size(v); i < n; i++)
            if (too_deep(json_array_get(v, i), limit - 1)) return true;
        return false;
    }
    for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it))
        if (too_deep(json_object_iter_value(it), limit - 1)) return true;
    return false;
}

json_t *sw_json_parse(const char *text, size_t len, int max_depth, char *err, size_t errlen)
{
    json_error_t e;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    if (!v) {
        /* Jansson's own words, but for the one that names a flag of its API */
        const char *why = json_error_code(&e) == json_error_null_character
                              ? "\\u0000 is not allowed in a string"
                              : e.text;
        snprintf(err, errlen, "%s (column %d)", why, e.column);
        return NULL;
    }
    if (too_deep(v, max_depth)) {
        json_decref(v);
        snprintf(err, errlen, "nesting deeper than %d levels", max_depth);
        return NULL;
    }
    return v;
}
