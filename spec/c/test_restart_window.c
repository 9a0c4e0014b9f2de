/* Unit tests for a group's restart window (host/restart_window.c, scenarios 24-26 and 30):
 * more than intensity restarts within period exceed it; spaced restarts never do; intensity
 * 0 fails at once; the ring grows only as restarts come and never past intensity; after any
 * number of past restarts a restart still looks at one slot. Times are synthetic (ns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "restart_window.h"

#define MS 1000000LL

static void test_third_restart_in_period_exceeds(void **st)
{
    (void)st;
    sw_window w = {0};
    assert_false(sw_window_add(&w, 2, 1000 * MS, 0));
    assert_false(sw_window_add(&w, 2, 1000 * MS, 100 * MS));
    assert_true(sw_window_add(&w, 2, 1000 * MS, 200 * MS));
    sw_window_free(&w);
}

static void test_spaced_restarts_never_exceed(void **st)
{
    (void)st;
    sw_window w = {0};
    for (int64_t i = 0; i < 1000; i++) assert_false(sw_window_add(&w, 2, 100 * MS, i * 51 * MS));
    sw_window_free(&w);
}

static void test_oldest_leaving_the_period_makes_room(void **st)
{
    (void)st;
    sw_window w = {0};
    assert_false(sw_window_add(&w, 2, 1000 * MS, 0));
    assert_false(sw_window_add(&w, 2, 1000 * MS, 900 * MS));
    assert_true(sw_window_add(&w, 2, 1000 * MS, 999 * MS));   /* 0, 900, 999: three within 1s */
    assert_false(sw_window_add(&w, 2, 1000 * MS, 1000 * MS)); /* 0 has left: 900, 1000 */
    assert_true(sw_window_add(&w, 2, 1000 * MS, 1500 * MS));
    sw_window_free(&w);
}

static void test_intensity_zero_fails_at_once(void **st)
{
    (void)st;
    sw_window w = {0};
    assert_true(sw_window_add(&w, 0, 1000 * MS, 0));
    assert_null(w.times);
    sw_window_free(&w);
}

static void test_reset_starts_fresh(void **st)
{
    (void)st;
    sw_window w = {0};
    assert_false(sw_window_add(&w, 1, 1000 * MS, 0));
    assert_true(sw_window_add(&w, 1, 1000 * MS, 1));
    sw_window_reset(&w);
    assert_false(sw_window_add(&w, 1, 1000 * MS, 2));
    sw_window_free(&w);
}

/* The exact count at a large intensity: 100,000 restarts inside the period pass, the next
 * fails; the ring never holds more than intensity times. */
static void test_large_intensity_is_exact(void **st)
{
    (void)st;
    sw_window w = {0};
    for (int64_t i = 0; i < 100000; i++) assert_false(sw_window_add(&w, 100000, 3600000 * MS, i));
    assert_true(sw_window_add(&w, 100000, 3600000 * MS, 100000));
    assert_true(w.cap <= 100000);
    sw_window_free(&w);
}

/* Scenario 30: a million spaced restarts keep the ring at its small size: each restart
 * touches one slot, whatever came before. */
static void test_ring_stays_small_over_a_million_restarts(void **st)
{
    (void)st;
    sw_window w = {0};
    for (int64_t i = 0; i < 1000000; i++) assert_false(sw_window_add(&w, 5, 10 * MS, i * 3 * MS));
    assert_int_equal(w.cap, 5);
    assert_int_equal(w.n, 5);
    sw_window_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_third_restart_in_period_exceeds),
        cmocka_unit_test(test_spaced_restarts_never_exceed),
        cmocka_unit_test(test_oldest_leaving_the_period_makes_room),
        cmocka_unit_test(test_intensity_zero_fails_at_once),
        cmocka_unit_test(test_reset_starts_fresh),
        cmocka_unit_test(test_large_intensity_is_exact),
        cmocka_unit_test(test_ring_stays_small_over_a_million_restarts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
