/* Unit tests for host/base/uuid.c (RFC 9562): version and variant bits, v7's time stamp (the
 * clock's milliseconds) and its strict order, also between threads, and the text form. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "uuid.h"

static void check_bits(const uint8_t u[16], unsigned version)
{
    assert_int_equal(u[6] >> 4, version);
    assert_int_equal(u[8] >> 6, 2); /* variant 10 */
}

static uint64_t ms_of(const uint8_t u[16])
{
    uint64_t ms = 0;
    for (int i = 0; i < 6; i++) ms = ms << 8 | u[i];
    return ms;
}

static void test_v4_bits_and_randomness(void **state)
{
    (void)state;
    uint8_t a[16], b[16];
    assert_int_equal(sw_uuid_v4(a), 0);
    assert_int_equal(sw_uuid_v4(b), 0);
    check_bits(a, 4);
    check_bits(b, 4);
    assert_memory_not_equal(a, b, 16);
}

static void test_v7_carries_the_clock(void **state)
{
    (void)state;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t before = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    uint8_t u[16];
    assert_int_equal(sw_uuid_v7(u), 0);
    check_bits(u, 7);
    assert_true(ms_of(u) >= before && ms_of(u) < before + 1000);
}

static void test_v7_strictly_increasing(void **state)
{
    (void)state;
    uint8_t prev[16], u[16];
    assert_int_equal(sw_uuid_v7(prev), 0);
    for (int i = 0; i < 100000; i++) { /* many within one millisecond: the fraction and +1 */
        assert_int_equal(sw_uuid_v7(u), 0);
        check_bits(u, 7);
        if (memcmp(prev, u, 16) >= 0) fail_msg("id %d is not above the one before", i);
        memcpy(prev, u, 16);
    }
}

#define PER_THREAD 20000
static uint8_t made[2][PER_THREAD][16];

static void *make_many(void *arg)
{
    uint8_t(*out)[16] = arg;
    for (int i = 0; i < PER_THREAD; i++) sw_uuid_v7(out[i]);
    return NULL;
}

static int cmp16(const void *a, const void *b) { return memcmp(a, b, 16); }

static void test_v7_unique_between_threads(void **state)
{
    (void)state;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, make_many, made[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int k = 0; k < 2; k++)
        for (int i = 1; i < PER_THREAD; i++)
            assert_true(memcmp(made[k][i - 1], made[k][i], 16) < 0); /* each thread's in order */
    qsort(made, 2 * PER_THREAD, 16, cmp16);
    uint8_t(*all)[16] = made[0];
    for (int i = 1; i < 2 * PER_THREAD; i++) /* and no time stamp given twice */
        assert_true(memcmp(all[i - 1], all[i], 8) < 0);
}

static void test_text(void **state)
{
    (void)state;
    uint8_t u[16];
    for (int i = 0; i < 16; i++) u[i] = (uint8_t)(i * 17);
    char s[SW_UUID_TEXT];
    sw_uuid_text(u, s);
    assert_string_equal(s, "00112233-4455-6677-8899-aabbccddeeff");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v4_bits_and_randomness),
        cmocka_unit_test(test_v7_carries_the_clock),
        cmocka_unit_test(test_v7_strictly_increasing),
        cmocka_unit_test(test_v7_unique_between_threads),
        cmocka_unit_test(test_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
