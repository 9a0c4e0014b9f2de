/* Unit tests for registry/units.c: durations and sizes as the registry writes them (docs/registry.md:
 * "250ms", "1.5s", "2m", "1h" or a number of seconds; "64KB", "32MB", "1GB" or a number of
 * bytes; KB = 1024), the strictness promised by units.h, and sw_format_duration. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

#define MS SW_NS_PER_MS
#define S  SW_NS_PER_S

static int64_t dur_ok(const char *text)
{
    int64_t ns = -12345;
    if (sw_parse_duration(text, &ns) != 0) fail_msg("duration \"%s\" refused", text);
    return ns;
}

static void dur_bad(const char *text)
{
    int64_t ns = -12345;
    if (sw_parse_duration(text, &ns) == 0)
        fail_msg("duration \"%s\" accepted as %lld ns", text, (long long)ns);
}

static uint64_t size_ok(const char *text)
{
    uint64_t b = 12345;
    if (sw_parse_size(text, &b) != 0) fail_msg("size \"%s\" refused", text);
    return b;
}

static void size_bad(const char *text)
{
    uint64_t b = 12345;
    if (sw_parse_size(text, &b) == 0)
        fail_msg("size \"%s\" accepted as %llu bytes", text, (unsigned long long)b);
}

/* ---- durations ---- */

static void test_duration_units(void **state)
{
    (void)state;
    assert_int_equal(dur_ok("250ms"), 250 * MS);
    assert_int_equal(dur_ok("1.5s"), 1500 * MS);
    assert_int_equal(dur_ok("2m"), 120 * S);
    assert_int_equal(dur_ok("1h"), 3600 * S);
    assert_int_equal(dur_ok("1s"), 1 * S);
    assert_int_equal(dur_ok("90s"), 90 * S);
    assert_int_equal(dur_ok("1ms"), 1 * MS);
    assert_int_equal(dur_ok("0.5ms"), 500000);
    assert_int_equal(dur_ok("1.25h"), 4500 * S);
    assert_int_equal(dur_ok("0.1s"), 100 * MS);
}

static void test_duration_zero_is_zero(void **state)
{
    (void)state;
    assert_int_equal(dur_ok("0"), 0);
    assert_int_equal(dur_ok("0s"), 0);
    assert_int_equal(dur_ok("0ms"), 0);
    assert_int_equal(dur_ok("0m"), 0);
    assert_int_equal(dur_ok("0h"), 0);
    assert_int_equal(dur_ok("0.0s"), 0);
}

static void test_duration_bare_number_is_seconds(void **state)
{
    (void)state;
    assert_int_equal(dur_ok("10"), 10 * S);
    assert_int_equal(dur_ok("2.5"), 2500 * MS);
    assert_int_equal(dur_ok("3600"), 3600 * S);
}

static void test_duration_from_seconds(void **state)
{
    (void)state;
    int64_t ns = -1;
    assert_int_equal(sw_duration_from_seconds(0, &ns), 0);
    assert_int_equal(ns, 0);
    assert_int_equal(sw_duration_from_seconds(2, &ns), 0);
    assert_int_equal(ns, 2 * S);
    assert_int_equal(sw_duration_from_seconds(1.5, &ns), 0);
    assert_int_equal(ns, 1500 * MS);
    assert_int_equal(sw_duration_from_seconds(0.25, &ns), 0);
    assert_int_equal(ns, 250 * MS);
    assert_int_equal(sw_duration_from_seconds(0.001, &ns), 0);
    assert_int_equal(ns, 1 * MS);
    /* 9e9 s = 9e18 ns still fits in an int64 */
    assert_int_equal(sw_duration_from_seconds(9e9, &ns), 0);
    assert_int_equal(ns, INT64_C(9000000000) * S);

    assert_int_equal(sw_duration_from_seconds(-1, &ns), -1);
    assert_int_equal(sw_duration_from_seconds(-0.001, &ns), -1);
    assert_int_equal(sw_duration_from_seconds(NAN, &ns), -1);
    assert_int_equal(sw_duration_from_seconds(INFINITY, &ns), -1);
    assert_int_equal(sw_duration_from_seconds(-INFINITY, &ns), -1);
    assert_int_equal(sw_duration_from_seconds(1e10, &ns), -1); /* 1e19 ns > INT64_MAX */
    assert_int_equal(sw_duration_from_seconds(1e300, &ns), -1);
}

static void test_duration_rejects_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "5x",    "-1s", "-1",   "1.5.5s", " 1s",  "1s ", "1 s",   "",    "ms",   "s",   ".",
        ".s",    "1S",  "1MS",  "1H",     "1sec", "1d",  "1m30s", "1e3", "1e3s", "+1s", "1,5s",
        "0x10s", "1ss", "1mss", "\t1s",   "1s\n", "one", "nan",   "inf", "1us",  "1ns",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) dur_bad(bad[i]);
}

static void test_duration_rejects_huge(void **state)
{
    (void)state;
    dur_bad("10000000000"); /* 1e10 s: over INT64_MAX nanoseconds */
    dur_bad("10000000000s");
    dur_bad("3000000h");   /* 1.08e10 s */
    dur_bad("200000000m"); /* 1.2e10 s */
    dur_bad("99999999999999999999999999999h");
    /* far more digits than any double holds */
    dur_bad("1000000000000000000000000000000000000000000000000000000000000000000000000000000000s");
    /* the largest values that do fit are still accepted */
    assert_int_equal(dur_ok("9000000000"), INT64_C(9000000000) * S);
    assert_int_equal(dur_ok("2500000h"), INT64_C(9000000000) * S);
}

/* ---- sizes ---- */

static void test_size_units(void **state)
{
    (void)state;
    assert_true(size_ok("64KB") == 65536u);
    assert_true(size_ok("32MB") == 32u * 1024 * 1024);
    assert_true(size_ok("1GB") == 1024u * 1024 * 1024);
    assert_true(size_ok("1KB") == 1024u);
    assert_true(size_ok("16GB") == UINT64_C(16) * 1024 * 1024 * 1024);
    assert_true(size_ok("0") == 0u);
    assert_true(size_ok("0KB") == 0u);
    assert_true(size_ok("123") == 123u);
    assert_true(size_ok("123B") == 123u);
    assert_true(size_ok("4096") == 4096u);
}

static void test_size_rejects_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "1.5B", "1.5",  "0.5", "64kb",    "64Kb", "64kB", "-1MB", "-1", "KB",
        "MB",   "B",    "",    " 1KB",    "1KB ", "1 KB", "1K",   "1M", "1G",
        "1TB",  "1KiB", "1e3", "1.2.3KB", "+1KB", "one",  "1KBB",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) size_bad(bad[i]);
}

static void test_size_rejects_huge(void **state)
{
    (void)state;
    size_bad("20000000000GB");        /* 2.1e19 bytes > UINT64_MAX */
    size_bad("18446744073709551616"); /* UINT64_MAX + 1 */
    size_bad("99999999999999999999999999");
    size_bad("1000000000000000000000000000000000000000000000000000000000000000000000000000000000");
    assert_true(size_ok("1000000GB") == UINT64_C(1000000) * 1024 * 1024 * 1024);
}

/* Regression (was a bug): registry/units.c read_number: sizes go through a double, so a byte count above 2^53 that
 * a double cannot hold is silently changed instead of being kept or refused: "9007199254740993"
 * parses as 9007199254740992. Correct: the exact value, or -1. */
static void test_size_exact_or_refused_above_2_53(void **state)
{
    (void)state;
    uint64_t b = 0;
    if (sw_parse_size("9007199254740993", &b) == 0) assert_true(b == UINT64_C(9007199254740993));
}

/* ---- formatting ---- */

static void fmt(int64_t ns, char *buf, size_t size) { sw_format_duration(ns, buf, (unsigned)size); }

static void test_format_duration_natural(void **state)
{
    (void)state;
    char buf[64];
    fmt(250 * MS, buf, sizeof buf);
    assert_string_equal(buf, "250ms");
    fmt(1500 * MS, buf, sizeof buf);
    assert_string_equal(buf, "1.5s");
    fmt(120 * S, buf, sizeof buf);
    assert_string_equal(buf, "2m");
    fmt(1 * S, buf, sizeof buf);
    assert_string_equal(buf, "1s");
    fmt(90 * S, buf, sizeof buf);
    assert_string_equal(buf, "90s");
    fmt(60 * S, buf, sizeof buf);
    assert_string_equal(buf, "1m");
    fmt(61500 * MS, buf, sizeof buf);
    assert_string_equal(buf, "61.5s");
    fmt(1 * MS, buf, sizeof buf);
    assert_string_equal(buf, "1ms");
    fmt(999 * MS, buf, sizeof buf);
    assert_string_equal(buf, "999ms");
    fmt(0, buf, sizeof buf);
    int64_t back = -1;
    assert_int_equal(sw_parse_duration(buf, &back), 0);
    assert_int_equal(back, 0);
}

/* What sw_format_duration prints must read back as the same duration for the values the
 * registry's own defaults and examples use. */
static void test_format_duration_round_trips_common_values(void **state)
{
    (void)state;
    const int64_t values[] = {
        1 * MS,  10 * MS, 100 * MS, 250 * MS, 500 * MS,  1 * S,      1500 * MS,
        2 * S,   5 * S,   10 * S,   30 * S,   45 * S,    90 * S,     60 * S,
        120 * S, 300 * S, 600 * S,  1800 * S, 2500 * MS, 12345 * MS,
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char buf[64];
        int64_t back = -1;
        fmt(values[i], buf, sizeof buf);
        if (sw_parse_duration(buf, &back) != 0 || back != values[i])
            fail_msg("%lld ns formats as \"%s\", which does not read back", (long long)values[i],
                     buf);
    }
}

static void test_format_duration_truncates_safely(void **state)
{
    (void)state;
    char buf[4];
    memset(buf, 'X', sizeof buf);
    fmt(250 * MS, buf, sizeof buf);
    assert_int_equal(buf[3], '\0');
    assert_memory_equal(buf, "250", 3);
}

/* Regression (was a bug): registry/units.c sw_format_duration: the "shortest natural rendering" of one hour is
 * "60m" (and of a day "1440m"); units.h documents "1h" as a unit and "1h" is shorter. */
static void test_format_duration_hours(void **state)
{
    (void)state;
    char buf[64];
    fmt(3600 * S, buf, sizeof buf);
    assert_string_equal(buf, "1h");
    fmt(7200 * S, buf, sizeof buf);
    assert_string_equal(buf, "2h");
}

/* Regression (was a bug): registry/units.c sw_format_duration: it prints with %g / %.3g, i.e. at most 6 (or 3)
 * significant digits and in exponent notation for large or tiny values, so the text is lossy and
 * often not a valid duration: 10000001 s -> "1e+07s", 1 ns -> "1e-06ms", 1234567 ms ->
 * "1234.57s", 1.234567 ms -> "1.23ms". Every rendering should read back as the same value. */
static void test_format_duration_round_trips_everything(void **state)
{
    (void)state;
    const int64_t values[] = {
        INT64_C(10000001) * S, 1, 1500, 1234567, INT64_C(1234567) * MS, INT64_C(86401) * S,
        3600 * S + 1 * MS,
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char buf[64];
        int64_t back = -1;
        fmt(values[i], buf, sizeof buf);
        if (sw_parse_duration(buf, &back) != 0 || back != values[i])
            fail_msg("%lld ns formats as \"%s\", which does not read back", (long long)values[i],
                     buf);
    }
}

/* time.parse_duration's reading (docs/lua-api.md): a registry duration, or number-and-unit
 * terms in a row; the registry itself stays strict (test_duration_rejects_malformed). */
static void test_duration_terms(void **state)
{
    (void)state;
    int64_t ns;
    static const struct {
        const char *text;
        int64_t ns;
    } ok[] = {{"1m30s", 90 * S},   {"1h2m3.5s", 3723 * S + 500 * MS},
              {"250ms", 250 * MS}, {"2", 2 * S},
              {"1.5h", 5400 * S},  {"1s500ms", 1500 * MS},
              {"30s1m", 90 * S},   {"0s", 0},
              {"0.5", 500 * MS}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        if (sw_parse_duration_terms(ok[i].text, &ns) != 0) fail_msg("\"%s\" refused", ok[i].text);
        if (ns != ok[i].ns) fail_msg("\"%s\" read as %lld ns", ok[i].text, (long long)ns);
    }
    static const char *const bad[] = {"",   "1m30", "m",     "1x",   "1m 30s", "-1s",
                                      "1d", "1us",  "1m-1s", "1e3s", "1..5s",  "s1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (sw_parse_duration_terms(bad[i], &ns) == 0) fail_msg("\"%s\" accepted", bad[i]);
    assert_int_equal(sw_parse_duration_terms("3000000h", &ns), -1); /* past int64 ns */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_units),
        cmocka_unit_test(test_duration_zero_is_zero),
        cmocka_unit_test(test_duration_bare_number_is_seconds),
        cmocka_unit_test(test_duration_from_seconds),
        cmocka_unit_test(test_duration_rejects_malformed),
        cmocka_unit_test(test_duration_rejects_huge),
        cmocka_unit_test(test_size_units),
        cmocka_unit_test(test_size_rejects_malformed),
        cmocka_unit_test(test_size_rejects_huge),
        cmocka_unit_test(test_size_exact_or_refused_above_2_53),
        cmocka_unit_test(test_format_duration_natural),
        cmocka_unit_test(test_format_duration_round_trips_common_values),
        cmocka_unit_test(test_format_duration_truncates_safely),
        cmocka_unit_test(test_format_duration_hours),
        cmocka_unit_test(test_format_duration_round_trips_everything),
        cmocka_unit_test(test_duration_terms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
