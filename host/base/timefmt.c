/* Wall-clock time as text (timefmt.h). The calendar arithmetic is Howard Hinnant's
 * days_from_civil / civil_from_days (public domain algorithms), valid for every year here. */
#include "timefmt.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *const month_names[] = {"January",   "February", "March",    "April",
                                          "May",       "June",     "July",     "August",
                                          "September", "October",  "November", "December"};
static const char *const day_names[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                        "Thursday", "Friday", "Saturday"};

double sw_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- calendar ---- */

typedef struct civil {
    int64_t year;
    int month, day, hour, min, sec, usec;
    int yday, wday; /* 1-366; 0 = Sunday */
    int64_t unix_secs;
} civil;

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Days since 1970-01-01 of the date y-m-d. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, civil *c)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    c->day = (int)(doy - (153 * mp + 2) / 5 + 1);
    c->month = (int)(mp < 10 ? mp + 3 : mp - 9);
    c->year = yoe + era * 400 + (c->month <= 2);
}

static bool leap_year(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap_year(y) ? 29 : days[m - 1];
}

/* t -> its calendar fields, rounded to the microsecond. */
static int split(double t, civil *c, char *err, size_t errlen)
{
    int64_t us = isfinite(t) ? llround(t * 1e6) : 0;
    if (!(t >= SW_TIME_MIN && t < SW_TIME_MAX) || us >= (int64_t)SW_TIME_MAX * 1000000) {
        snprintf(err, errlen, "time out of range: years 1 to 9999");
        return -1;
    }
    c->unix_secs = floor_div(us, 1000000);
    c->usec = (int)(us - c->unix_secs * 1000000);
    int64_t days = floor_div(c->unix_secs, 86400), rem = c->unix_secs - days * 86400;
    c->hour = (int)(rem / 3600);
    c->min = (int)(rem / 60 % 60);
    c->sec = (int)(rem % 60);
    civil_from_days(days, c);
    c->yday = (int)(days - days_from_civil(c->year, 1, 1)) + 1;
    c->wday = (int)(days - floor_div(days + 4, 7) * 7 + 4); /* 1970-01-01 was a Thursday */
    return 0;
}

/* ---- format ---- */

typedef struct out {
    char *p;
    size_t n;
    bool full;
} out;

static void emit(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->p + o->n, SW_TIMEFMT_MAX_OUT - o->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= SW_TIMEFMT_MAX_OUT - o->n) o->full = true;
    else o->n += (size_t)k;
}

static void emit_rfc3339(out *o, const civil *c)
{
    emit(o, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)c->year, c->month, c->day, c->hour,
         c->min, c->sec);
    if (c->usec) {
        char frac[8];
        snprintf(frac, sizeof frac, "%06d", c->usec);
        size_t n = 6;
        while (frac[n - 1] == '0') n--;
        emit(o, ".%.*s", (int)n, frac);
    }
    emit(o, "Z");
}

/* One directive (the letter after %); false if there is no such directive. */
static bool emit_directive(out *o, char d, const civil *c)
{
    switch (d) {
    case 'Y': emit(o, "%04lld", (long long)c->year); break;
    case 'y': emit(o, "%02d", (int)(c->year % 100)); break;
    case 'm': emit(o, "%02d", c->month); break;
    case 'd': emit(o, "%02d", c->day); break;
    case 'e': emit(o, "%2d", c->day); break;
    case 'j': emit(o, "%03d", c->yday); break;
    case 'H': emit(o, "%02d", c->hour); break;
    case 'I': emit(o, "%02d", c->hour % 12 ? c->hour % 12 : 12); break;
    case 'p': emit(o, "%s", c->hour < 12 ? "AM" : "PM"); break;
    case 'M': emit(o, "%02d", c->min); break;
    case 'S': emit(o, "%02d", c->sec); break;
    case 'f': emit(o, "%06d", c->usec); break;
    case 'a': emit(o, "%.3s", day_names[c->wday]); break;
    case 'A': emit(o, "%s", day_names[c->wday]); break;
    case 'b': emit(o, "%.3s", month_names[c->month - 1]); break;
    case 'B': emit(o, "%s", month_names[c->month - 1]); break;
    case 'F': emit(o, "%04lld-%02d-%02d", (long long)c->year, c->month, c->day); break;
    case 'T': emit(o, "%02d:%02d:%02d", c->hour, c->min, c->sec); break;
    case 's': emit(o, "%lld", (long long)c->unix_secs); break;
    case 'z': emit(o, "+0000"); break;
    case 'Z': emit(o, "UTC"); break;
    case '%': emit(o, "%%"); break;
    default: return false;
    }
    return true;
}

int sw_time_format(double t, const char *fmt, char *buf, char *err, size_t errlen)
{
    civil c;
    if (split(t, &c, err, errlen) != 0) return -1;
    out o = {buf, 0, false};
    buf[0] = 0;
    if (!fmt || strcmp(fmt, "rfc3339") == 0) {
        emit_rfc3339(&o, &c);
        return 0;
    }
    for (const char *f = fmt; *f && !o.full; f++) {
        if (*f != '%') {
            emit(&o, "%c", *f);
        } else if (!f[1]) {
            snprintf(err, errlen, "the format ends with a lone %%");
            return -2;
        } else if (!emit_directive(&o, *++f, &c)) {
            snprintf(err, errlen, "unknown directive %%%c in the format", *f);
            return -2;
        }
    }
    if (o.full) {
        snprintf(err, errlen, "the result is longer than %d bytes", SW_TIMEFMT_MAX_OUT - 1);
        return -2;
    }
    return 0;
}

/* ---- parse ---- */

typedef struct reader {
    const char *s0, *s; /* the text, and where reading is */
    const char *fmt;    /* for messages */
    char *err;
    size_t errlen;
    int64_t year;
    int month, day, hour, min, sec, offset; /* offset: seconds east of UTC */
    double frac;
} reader;

/* The text does not match: -1, with where and why. */
static int mismatch(reader *r, const char *why)
{
    snprintf(r->err, r->errlen, "cannot parse \"%.64s\" as %s: %s at byte %zu", r->s0, r->fmt, why,
             (size_t)(r->s - r->s0) + 1);
    return -1;
}

/* Exactly n digits. */
static int read_digits(reader *r, int n, int64_t *v)
{
    int64_t x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)r->s[i])) {
            char why[32];
            snprintf(why, sizeof why, "expected %d digits", n);
            return mismatch(r, why);
        }
        x = x * 10 + (r->s[i] - '0');
    }
    r->s += n;
    *v = x;
    return 0;
}

static int read_int(reader *r, int n, int *v)
{
    int64_t x;
    if (read_digits(r, n, &x) != 0) return -1;
    *v = (int)x;
    return 0;
}

static int expect(reader *r, const char *accepted, const char *what)
{
    if (*r->s && strchr(accepted, *r->s)) {
        r->s++;
        return 0;
    }
    char why[48];
    snprintf(why, sizeof why, "expected %s", what);
    return mismatch(r, why);
}

/* One digit or more after the ".": the fraction of a second (digits past the ninth ignored). */
static int read_fraction(reader *r)
{
    double scale = 0.1;
    const char *start = r->s;
    for (; isdigit((unsigned char)*r->s); r->s++, scale /= 10)
        if (r->s - start < 9) r->frac += (*r->s - '0') * scale;
    return r->s > start ? 0 : mismatch(r, "expected digits of a fraction");
}

/* Z, z, +hh:mm, -hh:mm or +hhmm. */
static int read_zone(reader *r)
{
    if (*r->s == 'Z' || *r->s == 'z') {
        r->s++;
        return 0;
    }
    int sign = *r->s == '-' ? -1 : 1, h, m;
    if (expect(r, "+-", "a time zone (Z or +hh:mm)") != 0 || read_int(r, 2, &h) != 0) return -1;
    if (*r->s == ':') r->s++;
    if (read_int(r, 2, &m) != 0) return -1;
    if (h > 23 || m > 59) return mismatch(r, "time zone offset out of range");
    r->offset = sign * (h * 3600 + m * 60);
    return 0;
}

static int read_month_name(reader *r)
{
    for (int m = 0; m < 12; m++) {
        if (strncasecmp(r->s, month_names[m], 3) == 0) {
            r->month = m + 1;
            r->s += 3;
            return 0;
        }
    }
    return mismatch(r, "expected a month name (Jan to Dec)");
}

static int parse_rfc3339(reader *r)
{
    if (read_digits(r, 4, &r->year) || expect(r, "-", "\"-\"") || read_int(r, 2, &r->month) ||
        expect(r, "-", "\"-\"") || read_int(r, 2, &r->day) ||
        expect(r, "Tt ", "\"T\" between date and time") || read_int(r, 2, &r->hour) ||
        expect(r, ":", "\":\"") || read_int(r, 2, &r->min) || expect(r, ":", "\":\"") ||
        read_int(r, 2, &r->sec))
        return -1;
    if (*r->s == '.') {
        r->s++;
        if (read_fraction(r) != 0) return -1;
    }
    return read_zone(r);
}

/* One directive; -2 (with err) if fmt names none. */
static int parse_directive(reader *r, char d)
{
    switch (d) {
    case 'Y': return read_digits(r, 4, &r->year);
    case 'm': return read_int(r, 2, &r->month);
    case 'd': return read_int(r, 2, &r->day);
    case 'H': return read_int(r, 2, &r->hour);
    case 'M': return read_int(r, 2, &r->min);
    case 'S': return read_int(r, 2, &r->sec);
    case 'f': return read_fraction(r);
    case 'b': return read_month_name(r);
    case 'z': return read_zone(r);
    case 'F':
        return read_digits(r, 4, &r->year) || expect(r, "-", "\"-\"") ||
                       read_int(r, 2, &r->month) || expect(r, "-", "\"-\"") ||
                       read_int(r, 2, &r->day)
                   ? -1
                   : 0;
    case 'T':
        return read_int(r, 2, &r->hour) || expect(r, ":", "\":\"") || read_int(r, 2, &r->min) ||
                       expect(r, ":", "\":\"") || read_int(r, 2, &r->sec)
                   ? -1
                   : 0;
    case '%': return expect(r, "%", "\"%\"");
    default:
        snprintf(r->err, r->errlen, "unknown directive %%%c in the format (time.parse reads %s)", d,
                 "%Y %m %d %H %M %S %f %b %z %F %T %%");
        return -2;
    }
}

static int parse_with(reader *r, const char *fmt)
{
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            char lit[2] = {*f, 0}, what[8];
            snprintf(what, sizeof what, "\"%c\"", *f);
            if (expect(r, lit, what) != 0) return -1;
            continue;
        }
        if (!f[1]) {
            snprintf(r->err, r->errlen, "the format ends with a lone %%");
            return -2;
        }
        int rc = parse_directive(r, *++f);
        if (rc != 0) return rc;
    }
    return 0;
}

/* The fields read make a real date and time. */
static int check_fields(reader *r)
{
    char why[64];
    if (r->year < 1) snprintf(why, sizeof why, "year 0 is out of range (1 to 9999)");
    else if (r->month < 1 || r->month > 12)
        snprintf(why, sizeof why, "month %d is out of range", r->month);
    else if (r->day < 1 || r->day > days_in_month(r->year, r->month))
        snprintf(why, sizeof why, "day %d is out of range for %04lld-%02d", r->day,
                 (long long)r->year, r->month);
    else if (r->hour > 23) snprintf(why, sizeof why, "hour %d is out of range", r->hour);
    else if (r->min > 59) snprintf(why, sizeof why, "minute %d is out of range", r->min);
    else if (r->sec > 59)
        snprintf(why, sizeof why, "second %d is out of range (no leap seconds)", r->sec);
    else return 0;
    snprintf(r->err, r->errlen, "cannot parse \"%.64s\" as %s: %s", r->s0, r->fmt, why);
    return -1;
}

int sw_time_parse(const char *s, const char *fmt, double *t, char *err, size_t errlen)
{
    bool rfc = !fmt || strcmp(fmt, "rfc3339") == 0;
    reader r = {.s0 = s, .s = s, .fmt = rfc ? "rfc3339" : fmt, .err = err, .errlen = errlen};
    r.year = 1970;
    r.month = r.day = 1;
    int rc = rfc ? parse_rfc3339(&r) : parse_with(&r, fmt);
    if (rc != 0) return rc;
    if (*r.s) return mismatch(&r, "unexpected text");
    if (check_fields(&r) != 0) return -1;
    int64_t secs = days_from_civil(r.year, r.month, r.day) * 86400 + r.hour * 3600 + r.min * 60 +
                   r.sec - r.offset;
    *t = (double)secs + r.frac;
    return 0;
}
