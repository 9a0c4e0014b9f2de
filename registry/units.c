/* Strict parsing of durations and sizes. */
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative decimal number with an optional fraction: "12", "1.5", ".5". Returns the number
 * of characters read, 0 if none. */
static size_t read_number(const char *s, double *out)
{
    size_t i = 0;
    int digits = 0;
    while (s[i] >= '0' && s[i] <= '9') {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9') {
            i++;
            digits++;
        }
    }
    if (!digits) return 0;
    char buf[64];
    if (i >= sizeof buf) return 0;
    memcpy(buf, s, i);
    buf[i] = 0;
    *out = strtod(buf, NULL);
    return i;
}

int sw_duration_from_seconds(double seconds, int64_t *out_ns)
{
    if (!(seconds >= 0) || seconds > 9.2e9) return -1; /* also rejects NaN */
    *out_ns = (int64_t)llround(seconds * 1e9);
    return 0;
}

typedef struct unit {
    const char *name;
    double scale;
} unit;

static const unit duration_units[] = {{"", 1},   {"s", 1},    {"ms", 1e-3},
                                      {"m", 60}, {"h", 3600}, {NULL, 0}};
static const unit size_units[] = {
    {"", 1},  {"B", 1}, {"KB", 1024.0}, {"MB", 1024.0 * 1024}, {"GB", 1024.0 * 1024 * 1024},
    {NULL, 0}};

/* A number followed by one of units: its value times the unit's scale. 0, or -1. */
static int scaled(const char *text, const unit *units, double *out)
{
    double v;
    size_t n = read_number(text, &v);
    if (!n) return -1;
    for (const unit *u = units; u->name; u++) {
        if (strcmp(text + n, u->name) != 0) continue;
        *out = v * u->scale;
        return 0;
    }
    return -1;
}

int sw_parse_duration(const char *text, int64_t *out_ns)
{
    double seconds;
    if (scaled(text, duration_units, &seconds) != 0) return -1;
    return sw_duration_from_seconds(seconds, out_ns);
}

/* The unit at the start of s (a run of letters) among units with a name; its length, 0 if
 * none. */
static size_t read_unit(const char *s, const unit *units, const unit **out)
{
    size_t n = 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z')) n++;
    for (const unit *u = units; n && u->name; u++) {
        if (strlen(u->name) != n || strncmp(s, u->name, n) != 0) continue;
        *out = u;
        return n;
    }
    return 0;
}

int sw_parse_duration_terms(const char *text, int64_t *out_ns)
{
    if (sw_parse_duration(text, out_ns) == 0) return 0;
    double seconds = 0;
    const char *s = text;
    do {
        double v;
        const unit *u;
        size_t n = read_number(s, &v);
        size_t k = n ? read_unit(s + n, duration_units, &u) : 0;
        if (!k) return -1;
        seconds += v * u->scale;
        s += n + k;
    } while (*s);
    return sw_duration_from_seconds(seconds, out_ns);
}

/* Whole numbers of bytes are parsed exactly (a double would round above 2^53). */
static int parse_whole(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int sw_parse_size(const char *text, uint64_t *out_bytes)
{
    size_t digits = strspn(text, "0123456789");
    if (digits && (text[digits] == 0 || strcmp(text + digits, "B") == 0)) {
        char buf[32];
        if (digits >= sizeof buf) return -1;
        memcpy(buf, text, digits);
        buf[digits] = 0;
        return parse_whole(buf, out_bytes);
    }
    double bytes;
    if (scaled(text, size_units, &bytes) != 0) return -1;
    if (bytes > 1.8e19) return -1;
    if (bytes != floor(bytes)) return SW_UNITS_FRACTION;
    *out_bytes = (uint64_t)bytes;
    return 0;
}

void sw_format_duration(int64_t ns, char *buf, unsigned size)
{
    static const struct {
        int64_t unit;
        const char *name;
    } whole[] = {{3600 * SW_NS_PER_S, "h"}, {60 * SW_NS_PER_S, "m"}, {SW_NS_PER_S, "s"}};
    if (ns == 0) {
        snprintf(buf, size, "0s");
        return;
    }
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
        if (ns % whole[i].unit == 0) {
            snprintf(buf, size, "%lld%s", (long long)(ns / whole[i].unit), whole[i].name);
            return;
        }
    }
    if (ns < SW_NS_PER_S && ns % SW_NS_PER_MS == 0) {
        snprintf(buf, size, "%lldms", (long long)(ns / SW_NS_PER_MS));
        return;
    }
    /* Exact seconds with up to nine decimals: "1.5s", "0.000000001s". */
    char digits[48];
    snprintf(digits, sizeof digits, "%lld.%09lld", (long long)(ns / SW_NS_PER_S),
             (long long)(ns % SW_NS_PER_S));
    size_t len = strlen(digits);
    while (digits[len - 1] == '0') digits[--len] = 0;
    snprintf(buf, size, "%ss", digits);
}
