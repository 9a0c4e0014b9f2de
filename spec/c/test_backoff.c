/* Backoff computation (scenarios 6, 7, 8, 11): growth, cap, jitter bounds, explicit zeros. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "backoff.h"
#include "units.h"

static sw_restart policy(double initial_s, double factor, double max_s, double jitter)
{
    sw_restart r = {0};
    r.initial_delay_ns = (int64_t)(initial_s * 1e9);
    r.max_delay_ns = (int64_t)(max_s * 1e9);
    r.backoff_factor = factor;
    r.jitter = jitter;
    return r;
}

static void test_grows_and_caps(void **state)
{
    (void)state;
    sw_restart r = policy(0.040, 2, 0.300, 0); /* scenario 6 */
    const int64_t want_ms[] = {40, 80, 160, 300, 300};
    for (int n = 1; n <= 5; n++)
        assert_int_equal(sw_backoff_delay(&r, n, 0.5), want_ms[n - 1] * SW_NS_PER_MS);
}

static void test_elfo_example(void **state)
{
    (void)state;
    sw_restart r = policy(4, 2, 36, 0); /* scenario 7 */
    const int64_t want_s[] = {4, 8, 16, 32, 36, 36};
    for (int n = 1; n <= 6; n++)
        assert_int_equal(sw_backoff_delay(&r, n, 0.3), want_s[n - 1] * SW_NS_PER_S);
}

static void test_jitter_bounds_and_spread(void **state)
{
    (void)state;
    sw_restart r = policy(1, 2, 90, 0.1); /* scenario 8: attempt 3 -> 4s +/- 10% */
    srand(7);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 200; i++) {
        int64_t d = sw_backoff_delay(&r, 3, rand() / ((double)RAND_MAX + 1));
        assert_true(d >= (int64_t)(3.6 * 1e9) && d <= (int64_t)(4.4 * 1e9));
        if (d < lo) lo = d;
        if (d > hi) hi = d;
    }
    assert_true(hi - lo > (int64_t)(0.2 * 1e9)); /* not all equal */
}

static void test_explicit_zeros(void **state)
{
    (void)state;
    sw_restart r = policy(0, 2, 90, 0); /* scenario 11 */
    for (int n = 1; n <= 4; n++) assert_int_equal(sw_backoff_delay(&r, n, 0.9), 0);
    r = policy(0.5, 1, 90, 0); /* factor 1: constant */
    for (int n = 1; n <= 4; n++) assert_int_equal(sw_backoff_delay(&r, n, 0.1), 500 * SW_NS_PER_MS);
}

static void test_huge_n_does_not_overflow(void **state)
{
    (void)state;
    sw_restart r = policy(1, 2, 90, 0);
    assert_int_equal(sw_backoff_delay(&r, 100000, 0.5), 90 * SW_NS_PER_S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_and_caps),           cmocka_unit_test(test_elfo_example),
        cmocka_unit_test(test_jitter_bounds_and_spread), cmocka_unit_test(test_explicit_zeros),
        cmocka_unit_test(test_huge_n_does_not_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
