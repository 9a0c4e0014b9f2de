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
    while (s[i] >= '0' && s[i] <= '9') { i++; digits++; }
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9') { i++; digits++; }
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

int sw_parse_duration(const char *text, int64_t *out_ns)
{
    double v;
    size_t n = read_number(text, &v);
    if (!n) return -1;
    const char *unit = text + n;
    double scale;
    if (strcmp(unit, "") == 0 || strcmp(unit, "s") == 0) scale = 1;
    else if (strcmp(unit, "ms") == 0) scale = 1e-3;
    else if (strcmp(unit, "m") == 0) scale = 60;
    else if (strcmp(unit, "h") == 0) scale = 3600;
    else return -1;
    return sw_duration_from_seconds(v * scale, out_ns);
}

int sw_parse_size(const char *text, uint64_t *out_bytes)
{
    double v;
    size_t n = read_number(text, &v);
    if (!n) return -1;
    const char *unit = text + n;
    double scale;
    if (strcmp(unit, "") == 0 || strcmp(unit, "B") == 0) scale = 1;
    else if (strcmp(unit, "KB") == 0) scale = 1024.0;
    else if (strcmp(unit, "MB") == 0) scale = 1024.0 * 1024;
    else if (strcmp(unit, "GB") == 0) scale = 1024.0 * 1024 * 1024;
    else return -1;
    double bytes = v * scale;
    if (bytes != floor(bytes) || bytes > 1.8e19) return -1; /* fractional bytes or overflow */
    *out_bytes = (uint64_t)bytes;
    return 0;
}

void sw_format_duration(int64_t ns, char *buf, unsigned size)
{
    if (ns % SW_NS_PER_MS != 0) snprintf(buf, size, "%.3gms", (double)ns / 1e6);
    else if (ns < SW_NS_PER_S) snprintf(buf, size, "%lldms", (long long)(ns / SW_NS_PER_MS));
    else if (ns % (60 * SW_NS_PER_S) == 0 && ns >= 60 * SW_NS_PER_S) snprintf(buf, size, "%lldm", (long long)(ns / (60 * SW_NS_PER_S)));
    else snprintf(buf, size, "%gs", (double)ns / 1e9);
}
