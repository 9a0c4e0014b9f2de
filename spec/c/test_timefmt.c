/* Unit tests for host/base/timefmt.c (docs/lua-api.md, time.format and time.parse): the
 * calendar against known dates (before 1970, leap years, the range's ends), RFC 3339 both
 * ways with fractions and offsets, the strftime-style directives, and every refusal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "timefmt.h"

static const char *fmt(double t, const char *f)
{
    static char out[SW_TIMEFMT_MAX_OUT];
    char err[200];
    if (sw_time_format(t, f, out, err, sizeof err) != 0) fail_msg("format %.6f: %s", t, err);
    return out;
}

static double parse(const char *s, const char *f)
{
    double t;
    char err[300];
    if (sw_time_parse(s, f, &t, err, sizeof err) != 0) fail_msg("parse \"%s\": %s", s, err);
    return t;
}

/* Refused with a message containing `needle`; returns the code (-1: the text, -2: the format). */
static int parse_bad(const char *s, const char *f, const char *needle)
{
    double t;
    char err[300] = "";
    int rc = sw_time_parse(s, f, &t, err, sizeof err);
    if (rc == 0) fail_msg("\"%s\" parsed as %.6f", s, t);
    if (!strstr(err, needle)) fail_msg("\"%s\": \"%s\" does not say \"%s\"", s, err, needle);
    return rc;
}

static void test_known_dates(void **state)
{
    (void)state;
    assert_string_equal(fmt(0, NULL), "1970-01-01T00:00:00Z");
    assert_string_equal(fmt(-1, NULL), "1969-12-31T23:59:59Z");
    assert_string_equal(fmt(951782400, NULL), "2000-02-29T00:00:00Z");
    assert_string_equal(fmt(4107542399, NULL), "2100-02-28T23:59:59Z"); /* 2100: not leap */
    assert_string_equal(fmt(1795500643, NULL), "2026-11-24T06:10:43Z");
    assert_string_equal(fmt(SW_TIME_MIN, NULL), "0001-01-01T00:00:00Z");
    assert_string_equal(fmt(SW_TIME_MAX - 1, NULL), "9999-12-31T23:59:59Z");
    assert_string_equal(fmt(-0.5, NULL), "1969-12-31T23:59:59.5Z");
}

static void test_fractions_to_the_microsecond(void **state)
{
    (void)state;
    assert_string_equal(fmt(1.5, "rfc3339"), "1970-01-01T00:00:01.5Z");
    assert_string_equal(fmt(1.000001, NULL), "1970-01-01T00:00:01.000001Z");
    assert_string_equal(fmt(1.0000004, NULL), "1970-01-01T00:00:01Z"); /* rounded */
    assert_string_equal(fmt(1795500643.123456, NULL), "2026-11-24T06:10:43.123456Z");
    assert_string_equal(fmt(59.9999999, NULL), "1970-01-01T00:01:00Z"); /* rounds up a minute */
}

static void test_rfc3339_round_trips(void **state)
{
    (void)state;
    const double values[] = {
        0, -1, 0.25, 951782400.75, 1795500643.123456, -62135596800, 253402300799.5, 1e9 + 0.000001};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        double back = parse(fmt(values[i], NULL), NULL);
        if (fabs(back - values[i]) > 1e-6) fail_msg("%.6f came back as %.6f", values[i], back);
    }
}

static void test_rfc3339_offsets_and_forms(void **state)
{
    (void)state;
    double utc = parse("2026-11-24T05:03:33Z", NULL);
    assert_true(parse("2026-11-24T06:03:33+01:00", NULL) == utc);
    assert_true(parse("2026-11-23T23:33:33-05:30", NULL) == utc);
    assert_true(parse("2026-11-24t05:03:33z", "rfc3339") == utc);
    assert_true(parse("2026-11-24 05:03:33Z", NULL) == utc);
    assert_true(parse("2026-11-24T05:03:33+0000", NULL) == utc);
    assert_true(fabs(parse("2026-11-24T06:03:33.250+01:00", NULL) - (utc + 0.25)) < 1e-9);
    assert_true(fabs(parse("1970-01-01T00:00:00.123456789Z", NULL) - 0.123456789) < 1e-9);
}

static void test_rfc3339_refusals(void **state)
{
    (void)state;
    assert_int_equal(parse_bad("2026-13-01T00:00:00Z", NULL, "month 13 is out of range"), -1);
    parse_bad("2026-02-29T00:00:00Z", NULL, "day 29 is out of range for 2026-02");
    parse_bad("2026-04-31T00:00:00Z", NULL, "day 31 is out of range");
    parse_bad("2026-01-01T24:00:00Z", NULL, "hour 24");
    parse_bad("2026-01-01T00:60:00Z", NULL, "minute 60");
    parse_bad("2026-12-31T23:59:60Z", NULL, "no leap seconds");
    parse_bad("0000-01-01T00:00:00Z", NULL, "year 0");
    parse_bad("2026-1-01T00:00:00Z", NULL, "expected 2 digits at byte 6");
    parse_bad("2026-01-01T00:00:00", NULL, "expected a time zone (Z or +hh:mm) at byte 20");
    parse_bad("2026-01-01T00:00:00+25:00", NULL, "offset out of range");
    parse_bad("2026-01-01T00:00:00.Z", NULL, "expected digits of a fraction");
    parse_bad("2026-01-01T00:00:00Zjunk", NULL, "unexpected text at byte 21");
    parse_bad("2026-01-01X00:00:00Z", NULL, "expected \"T\" between date and time");
    parse_bad("", NULL, "expected 4 digits at byte 1");
}

static void test_directives_format(void **state)
{
    (void)state;
    double t = 951825845.5; /* 2000-02-29T12:04:05.5Z, a Tuesday */
    assert_string_equal(fmt(t, "%Y-%m-%d %H:%M:%S.%f"), "2000-02-29 12:04:05.500000");
    assert_string_equal(fmt(t, "%F %T %z %Z"), "2000-02-29 12:04:05 +0000 UTC");
    assert_string_equal(fmt(t, "%a %A %b %B %e %j %y"), "Tue Tuesday Feb February 29 060 00");
    assert_string_equal(fmt(t, "%I %p|%s|%%"), "12 PM|951825845|%");
    assert_string_equal(fmt(0, "%I %p %e"), "12 AM  1");
    assert_string_equal(fmt(0, "plain text"), "plain text");
    assert_string_equal(fmt(0, ""), "");
}

static void test_directives_parse(void **state)
{
    (void)state;
    assert_true(parse("2000-02-29 12:04:05", "%Y-%m-%d %H:%M:%S") == 951825845);
    assert_true(parse("29 Feb 2000 12:04:05.5 +0100", "%d %b %Y %T.%f %z") == 951825845.5 - 3600);
    assert_true(parse("2000-02-29", "%F") == 951782400);
    assert_true(parse("10%", "%H%%") == 36000);
    assert_true(parse("1999", "%Y") == 915148800); /* the rest defaults: January 1st, 00:00 */
    parse_bad("2000-02-29", "%Y/%m/%d", "expected \"/\" at byte 5");
    parse_bad("x", "%b", "expected a month name");
    assert_int_equal(parse_bad("x", "%Q", "unknown directive %Q"), -2);
    assert_int_equal(parse_bad("x", "%", "lone %"), -2);
}

static void test_format_refusals(void **state)
{
    (void)state;
    char out[SW_TIMEFMT_MAX_OUT], err[200];
    assert_int_equal(sw_time_format(SW_TIME_MAX, NULL, out, err, sizeof err), -1);
    assert_non_null(strstr(err, "out of range"));
    assert_int_equal(sw_time_format(SW_TIME_MIN - 1, NULL, out, err, sizeof err), -1);
    assert_int_equal(sw_time_format(NAN, NULL, out, err, sizeof err), -1);
    assert_int_equal(sw_time_format(INFINITY, NULL, out, err, sizeof err), -1);
    assert_int_equal(sw_time_format(0, "%Q", out, err, sizeof err), -2);
    assert_non_null(strstr(err, "unknown directive %Q"));
    assert_int_equal(sw_time_format(0, "%", out, err, sizeof err), -2);
    char big[400];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(sw_time_format(0, big, out, err, sizeof err), -2);
    assert_non_null(strstr(err, "longer than 255 bytes"));
}

static void test_wall_clock(void **state)
{
    (void)state;
    double a = sw_wall_now();
    assert_true(a > 1.7e9 && a < 4e9);
    assert_true(sw_wall_now() >= a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_dates),
        cmocka_unit_test(test_fractions_to_the_microsecond),
        cmocka_unit_test(test_rfc3339_round_trips),
        cmocka_unit_test(test_rfc3339_offsets_and_forms),
        cmocka_unit_test(test_rfc3339_refusals),
        cmocka_unit_test(test_directives_format),
        cmocka_unit_test(test_directives_parse),
        cmocka_unit_test(test_format_refusals),
        cmocka_unit_test(test_wall_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
