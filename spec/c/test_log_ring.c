/* Unit tests for the log rings (host/base/log_ring.c) and the logs followers
 * (host/control/control_logs.c): a ring keeps a service's newest records within its line and
 * byte bounds and never another service's; reads give the last N, since a time, every service
 * in order; a follower gets the feed's new records of its service, and a follower whose queue
 * is full loses lines and is told how many with a marker record; a record reads back as the
 * JSON line the log would write. Times are synthetic (ns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control_logs.h"
#include "log_record.h"
#include "log_ring.h"

#define S 1000000000LL

static void put(sw_log_ring *r, int64_t t, const char *svc, int n)
{
    char rec[256];
    sw_log_field f = {.key = "n", .type = SW_LF_INT, .i = n};
    size_t len = sw_log_record_encode(rec, sizeof rec, SW_LOG_INFO, "m", &f, 1);
    assert_true(len <= sizeof rec);
    sw_log_ring_put(r, t, svc, rec, len);
}

/* The "n" of each JSON line of text[0..len), as "1 2 3" (a line without one: "?"). */
static char *ns_of(const char *text, size_t len)
{
    char *out = calloc(1, len + 1);
    size_t o = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *k = strstr(p, "\"n\":");
        int n;
        if (k && k < nl && sscanf(k + 4, "%d", &n) == 1)
            o += (size_t)sprintf(out + o, "%s%d", o ? " " : "", n);
        else o += (size_t)sprintf(out + o, "%s?", o ? " " : "");
        p = nl + 1;
    }
    return out;
}

/* The lines of a read as one string; count in *count. */
static char *read_all(sw_log_ring *r, const char *svc, size_t lines, int64_t since, size_t *count)
{
    sw_log_query q = {.service = svc, .lines = lines, .since_ns = since};
    char *out;
    size_t len;
    uint64_t seq;
    assert_int_equal(0, sw_log_ring_read(r, &q, &out, &len, count, &seq));
    char *s = ns_of(out ? out : "", len);
    free(out);
    return s;
}

static void test_keeps_the_newest_lines_of_each_service(void **st)
{
    (void)st;
    sw_log_ring *r = sw_log_ring_new(3, 1 << 20);
    for (int i = 1; i <= 10; i++) put(r, i * S, "app:a", i);
    put(r, 11 * S, "app:b", 100);
    size_t n;
    char *s = read_all(r, "app:a", 100, 0, &n);
    assert_int_equal(3, n);
    assert_string_equal("8 9 10", s);
    free(s);
    s = read_all(r, "app:b", 100, 0, &n);
    assert_string_equal("100", s);
    free(s);
    s = read_all(r, "app:a", 2, 0, &n);
    assert_string_equal("9 10", s);
    free(s);
    s = read_all(r, "app:none", 2, 0, &n);
    assert_int_equal(0, n);
    free(s);
    sw_log_ring_free(r);
}

static void test_a_record_reads_back_as_its_json_line(void **st)
{
    (void)st;
    json_t *list = json_pack("[i,s]", 1, "a");
    sw_log_field f[] = {{.key = "s", .type = SW_LF_STR, .s = "x \"y\""},
                        {.key = "i", .type = SW_LF_INT, .i = -7},
                        {.key = "d", .type = SW_LF_NUM, .d = 1.5},
                        {.key = "b", .type = SW_LF_BOOL, .b = true},
                        {.key = "j", .type = SW_LF_JSON, .j = list},
                        {.key = "msg", .type = SW_LF_STR, .s = "renamed"}};
    char rec[512];
    size_t n = sw_log_record_encode(rec, sizeof rec, SW_LOG_WARN, "hello", f, 6);
    assert_true(n <= sizeof rec);
    lbuf b;
    sw_log_record_json(&b, rec, n, "app:a", 1700000000123000000LL);
    char *line = strndup(b.p, b.len);
    assert_string_equal("{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"warn\",\"msg\":\"hello\","
                        "\"service\":\"app:a\",\"s\":\"x \\\"y\\\"\",\"i\":-7,\"d\":1.5,\"b\":true,"
                        "\"j\":[1,\"a\"],\"fields.msg\":\"renamed\"}\n",
                        line);
    free(line);
    sw_log_line_free(&b);
    /* too small a buffer: nothing written, the size needed returned */
    assert_int_equal(n, sw_log_record_encode(rec, 8, SW_LOG_WARN, "hello", f, 6));
    /* a broken record reads as nothing */
    sw_log_record_json(&b, rec, 5, NULL, 0);
    assert_int_equal(0, b.len);
    json_decref(list);
}

static void test_the_byte_bound_holds(void **st)
{
    (void)st;
    sw_log_ring *r = sw_log_ring_new(1000, 2048);
    for (int i = 1; i <= 10000; i++) put(r, i, "app:a", i);
    size_t n;
    char *s = read_all(r, "app:a", 1000000, 0, &n);
    assert_true(n > 10 && n < 2048 / 40);
    assert_non_null(strstr(s, " 10000"));
    free(s);
    sw_log_ring_free(r);
}

static void test_since_and_all_services_in_order(void **st)
{
    (void)st;
    sw_log_ring *r = sw_log_ring_new(100, 1 << 20);
    put(r, 1 * S, "app:a", 1);
    put(r, 2 * S, NULL, 2);
    put(r, 3 * S, "app:b", 3);
    put(r, 4 * S, "app:a", 4);
    size_t n;
    char *s = read_all(r, NULL, 100, 0, &n);
    assert_string_equal("1 2 3 4", s);
    free(s);
    s = read_all(r, NULL, 2, 0, &n);
    assert_string_equal("3 4", s);
    free(s);
    s = read_all(r, NULL, 100, 3 * S, &n);
    assert_string_equal("3 4", s);
    free(s);
    s = read_all(r, "app:a", 100, 2 * S, &n);
    assert_string_equal("4", s);
    free(s);
    sw_log_ring_free(r);
}

static int wakes;
static void count_wake(void *arg)
{
    (void)arg;
    wakes++;
}

static void release_all(sw_log_rec *list)
{
    for (sw_log_rec *r = list, *next; r; r = next) {
        next = r->feed_next;
        sw_log_rec_release(r);
    }
}

static void test_a_follower_gets_new_records_of_its_service(void **st)
{
    (void)st;
    sw_log_ring *r = sw_log_ring_new(100, 1 << 20);
    sw_log_ring_set_wake(r, count_wake, NULL);
    put(r, 1, "app:a", 1); /* before: no follower, no feed */
    sw_ctl_request req = {.cmd = SW_CTL_LOGS, .id = "app:a", .lines = 0, .follow = true};
    char *text;
    size_t len;
    sw_ctl_follow *f;
    assert_int_equal(0, sw_ctl_logs_read(r, &req, &text, &len, &f));
    assert_non_null(f);
    assert_memory_equal("{\"ok\":true,\"lines\":0}\n", text, len);
    free(text);
    wakes = 0;
    put(r, 2, "app:b", 2);
    put(r, 3, "app:a", 3);
    assert_int_equal(1, wakes); /* once: the feed was empty */
    uint64_t lost;
    sw_log_rec *list = sw_log_ring_take_feed(r, &lost);
    assert_int_equal(0, lost);
    sw_ctl_follow_batch(f, list, lost, SW_CTL_FOLLOW_QUEUE, &text, &len);
    char *s = ns_of(text, len);
    assert_string_equal("3", s);
    assert_non_null(strstr(text, "\"service\":\"app:a\""));
    free(s);
    free(text);
    release_all(list);
    sw_ctl_follow_free(r, f);
    sw_log_ring_set_wake(r, NULL, NULL);
    sw_log_ring_free(r);
}

static void test_a_full_follower_drops_lines_and_is_told(void **st)
{
    (void)st;
    sw_log_ring *r = sw_log_ring_new(100, 1 << 20);
    sw_ctl_request req = {.cmd = SW_CTL_LOGS, .lines = 0, .follow = true};
    char *text;
    size_t len;
    sw_ctl_follow *f;
    assert_int_equal(0, sw_ctl_logs_read(r, &req, &text, &len, &f));
    free(text);
    for (int i = 1; i <= 10; i++) put(r, i, "app:a", i);
    uint64_t lost;
    sw_log_rec *list = sw_log_ring_take_feed(r, &lost);
    /* room for two lines only (they are all the same length) */
    size_t one;
    {
        lbuf b;
        sw_log_rec_json(list, &b);
        one = b.len;
        sw_log_line_free(&b);
    }
    sw_ctl_follow_batch(f, list, lost, 2 * one, &text, &len);
    char *got = ns_of(text, len);
    assert_string_equal("1 2", got);
    free(got);
    free(text);
    release_all(list);
    assert_int_equal(8, f->dropped);
    /* once there is room: the marker first, then what comes */
    put(r, 11, "app:a", 11);
    list = sw_log_ring_take_feed(r, &lost);
    sw_ctl_follow_batch(f, list, lost, SW_CTL_FOLLOW_QUEUE, &text, &len);
    char *s = strndup(text, len);
    assert_non_null(strstr(s, "\"msg\":\"8 lines dropped\""));
    assert_non_null(strstr(s, "\"dropped\":8}\n"));
    free(s);
    s = ns_of(text, len);
    assert_string_equal("? 11", s);
    free(s);
    free(text);
    release_all(list);
    assert_int_equal(0, f->dropped);
    sw_ctl_follow_free(r, f);
    sw_log_ring_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_the_newest_lines_of_each_service),
        cmocka_unit_test(test_a_record_reads_back_as_its_json_line),
        cmocka_unit_test(test_the_byte_bound_holds),
        cmocka_unit_test(test_since_and_all_services_in_order),
        cmocka_unit_test(test_a_follower_gets_new_records_of_its_service),
        cmocka_unit_test(test_a_full_follower_drops_lines_and_is_told),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
