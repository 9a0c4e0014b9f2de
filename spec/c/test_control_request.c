/* Control requests (control_request.c) and the JSON writer behind every reply (jsonbuf.c):
 * valid requests of each command, every kind of bad line refused with a message, and text
 * written by sw_jbuf_str read back unchanged by the same parser the client uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "control_request.h"
#include "diag.h"
#include "jsonbuf.h"
#include "yaml_tree.h"

static int parse(const char *line, sw_ctl_request *r, char *err)
{
    return sw_ctl_request_parse(line, strlen(line), r, err, 256);
}

static void test_valid_requests(void **state)
{
    (void)state;
    sw_ctl_request r;
    char err[256];
    assert_int_equal(parse("{\"cmd\":\"status\"}", &r, err), 0);
    assert_int_equal(r.cmd, SW_CTL_STATUS);
    assert_null(r.id);
    sw_ctl_request_free(&r);
    assert_int_equal(parse("  {\"cmd\": \"stop\", \"id\": \"app:db\", \"timeout\": 2.5}\r", &r, err), 0);
    assert_int_equal(r.cmd, SW_CTL_STOP);
    assert_string_equal(r.id, "app:db");
    assert_true(r.timeout == 2.5);
    sw_ctl_request_free(&r);
    assert_int_equal(parse("{\"cmd\":\"reload\",\"all\":true}", &r, err), 0);
    assert_int_equal(r.cmd, SW_CTL_RELOAD);
    assert_true(r.all);
    sw_ctl_request_free(&r);
    assert_int_equal(parse("{\"cmd\":\"restart\",\"id\":\"app:\\u00e9t\\u00e9\"}", &r, err), 0);
    assert_string_equal(r.id, "app:\xc3\xa9t\xc3\xa9");
    assert_true(r.timeout == SW_CTL_DEFAULT_TIMEOUT);
    sw_ctl_request_free(&r);
}

static void refused(const char *line, const char *want)
{
    sw_ctl_request r;
    char err[256] = "";
    int rc = parse(line, &r, err);
    sw_ctl_request_free(&r);
    if (rc != -1 || !strstr(err, want)) fail_msg("\"%s\": got rc %d, \"%s\"; wanted \"%s\"", line, rc, err, want);
}

static void test_bad_requests(void **state)
{
    (void)state;
    refused("", "one JSON object per line");
    refused("status", "one JSON object per line");
    refused("[\"status\"]", "one JSON object per line");
    refused("{\"cmd\":\"status\"", "malformed JSON");
    refused("{\"cmd\":\"status\"} {}", "malformed JSON");
    refused("{\"cmd\":\"status\",\"cmd\":\"stop\"}", "duplicate key");
    refused("{}", "has no \"cmd\"");
    refused("{\"cmd\":7}", "\"cmd\" must be a string");
    refused("{\"cmd\":\"launch\"}", "unknown command \"launch\"");
    refused("{\"cmd\":\"start\"}", "start needs \"id\"");
    refused("{\"cmd\":\"status\",\"id\":\"\"}", "non-empty string");
    refused("{\"cmd\":\"status\",\"id\":[1]}", "non-empty string");
    refused("{\"cmd\":\"reload\",\"id\":\"app:db\"}", "reload takes no \"id\"");
    refused("{\"cmd\":\"stop\",\"id\":\"a:b\",\"all\":true}", "\"all\" does not apply to stop");
    refused("{\"cmd\":\"status\",\"timeout\":1}", "\"timeout\" does not apply to status");
    refused("{\"cmd\":\"stop\",\"id\":\"a:b\",\"timeout\":-1}", "\"timeout\" must be");
    refused("{\"cmd\":\"reload\",\"all\":\"yes\"}", "\"all\" must be true or false");
    refused("{\"cmd\":\"status\",\"verbose\":true}", "unknown field \"verbose\"");
    refused("{\"cmd\":\"status\",\"x\":&a [1]}", "unknown field \"x\"");
    char *deep = malloc(3000);
    strcpy(deep, "{\"cmd\":\"status\",\"x\":");
    size_t n = strlen(deep);
    memset(deep + n, '[', 1000);
    memset(deep + n + 1000, ']', 1000);
    strcpy(deep + n + 2000, "}");
    refused(deep, "malformed JSON");
    free(deep);
    char *big = malloc(SW_CTL_MAX_LINE + 100);
    memset(big, ' ', SW_CTL_MAX_LINE + 99);
    big[SW_CTL_MAX_LINE + 99] = 0;
    big[0] = '{';
    refused(big, "request too long");
    free(big);
    sw_ctl_request r;
    char err[256];
    assert_int_equal(sw_ctl_request_parse("{\"cmd\":\"status\"}\0x", 18, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "NUL"));
    sw_ctl_request_free(&r);
}

/* s written by sw_jbuf_str, read back by yaml_tree: the same text (invalid UTF-8 aside). */
static void round_trip(const char *s, const char *want)
{
    sw_jbuf b;
    sw_jbuf_init(&b);
    sw_jbuf_lit(&b, "{\"v\":");
    sw_jbuf_str(&b, s);
    sw_jbuf_lit(&b, "}");
    sw_arena a;
    sw_arena_init(&a);
    sw_diags d;
    sw_diags_init(&d);
    sw_node *root = sw_yaml_parse(&a, "t", b.p, b.len, &d);
    if (!root) fail_msg("%s: %s", b.p, d.n ? d.v[0].msg : "?");
    assert_string_equal(sw_node_get(root, "v")->str, want);
    for (size_t i = 0; i < b.len; i++) assert_true((unsigned char)b.p[i] >= 0x20);
    sw_diags_free(&d);
    sw_arena_free(&a);
    sw_jbuf_free(&b);
}

static void test_json_strings(void **state)
{
    (void)state;
    round_trip("plain", "plain");
    round_trip("quote \" backslash \\ slash /", "quote \" backslash \\ slash /");
    round_trip("line\nnext\ttab\r\x01\x1f\x7f", "line\nnext\ttab\r\x01\x1f\x7f");
    round_trip("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    round_trip("C1 \xc2\x85\xc2\x9b", "C1 \xc2\x85\xc2\x9b");
    round_trip("bad \xff\xc3 end", "bad \xef\xbf\xbd\xef\xbf\xbd end");
    sw_jbuf b;
    sw_jbuf_init(&b);
    sw_jbuf_str(&b, NULL);
    sw_jbuf_lit(&b, ",");
    sw_jbuf_num(&b, 0.1);
    sw_jbuf_lit(&b, ",");
    sw_jbuf_num(&b, 1.0 / 0.0);
    sw_jbuf_lit(&b, ",");
    sw_jbuf_int(&b, -42);
    assert_string_equal(b.p, "null,0.1,null,-42");
    sw_jbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_requests),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_json_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
