/* Pid strings: format and parse round-trip; parse refuses anything but "host|0x" and 1 to 16
 * hex digits (no spaces, signs or second prefix, which strtoull would have taken). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pidtable.h"

static void test_round_trip(void **state)
{
    (void)state;
    const uint64_t ids[] = {1, 0xabc, 0xffff, 0x10000, 0x123456789abcdefull, UINT64_MAX};
    char buf[32];
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        sw_pid_format(ids[i], buf, sizeof buf);
        assert_int_equal(sw_pid_parse(buf), ids[i]);
    }
    sw_pid_format(1, buf, sizeof buf);
    assert_string_equal(buf, "host|0x0001");
    assert_int_equal(sw_pid_parse("host|0xABcd"), 0xabcd);
}

static void test_refuses_malformed(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "host|0x",
                         "host|0x 12",
                         "host|0x-1",
                         "host|0x+1",
                         "host|0x0x12",
                         "host|0x12g",
                         "host|0x12 ",
                         "host|1",
                         "Host|0x1",
                         "host|0x11112222333344445",
                         "name"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sw_pid_parse(bad[i]), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refuses_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
