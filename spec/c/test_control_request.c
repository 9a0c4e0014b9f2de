/* Control requests (control_request.c) and the JSON module behind every request and reply
 * (host/base/json.c, on Jansson): valid requests of each command, every kind of bad line
 * refused with a message (YAML that is not JSON among them), and strings written by the
 * module read back unchanged by the same parser the client uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control_request.h"
#include "json.h"

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
    assert_int_equal(
        parse("  {\"cmd\": \"stop\", \"id\": \"app:db\", \"timeout\": 2.5}\r", &r, err), 0);
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
    /* a surrogate pair is one character (U+1F600) */
    assert_int_equal(parse("{\"cmd\":\"status\",\"id\":\"app:\\ud83d\\ude00\"}", &r, err), 0);
    assert_string_equal(r.id, "app:\xf0\x9f\x98\x80");
    sw_ctl_request_free(&r);
    /* integers are numbers too; nesting up to the limit is read (and refused as a field) */
    assert_int_equal(parse("{\"cmd\":\"start\",\"id\":\"a:b\",\"timeout\":0}", &r, err), 0);
    assert_true(r.timeout == 0);
    sw_ctl_request_free(&r);
}

/* logs: its fields and their defaults; they are refused elsewhere and when out of range. */
static void test_logs_requests(void **state)
{
    (void)state;
    sw_ctl_request r;
    char err[256];
    assert_int_equal(parse("{\"cmd\":\"logs\"}", &r, err), 0);
    assert_int_equal(r.cmd, SW_CTL_LOGS);
    assert_null(r.id);
    assert_int_equal(r.lines, SW_CTL_LOGS_LINES);
    assert_false(r.follow);
    sw_ctl_request_free(&r);
    assert_int_equal(
        parse("{\"cmd\":\"logs\",\"id\":\"app:db\",\"lines\":0,\"since\":1.5,\"follow\":true}", &r,
              err),
        0);
    assert_string_equal(r.id, "app:db");
    assert_int_equal(r.lines, 0);
    assert_true(r.since == 1.5 && r.follow);
    sw_ctl_request_free(&r);
    sw_ctl_request bad;
    const char *const cases[][2] = {
        {"{\"cmd\":\"status\",\"lines\":2}", "\"lines\" does not apply to status"},
        {"{\"cmd\":\"reload\",\"follow\":true}", "\"follow\" does not apply to reload"},
        {"{\"cmd\":\"logs\",\"lines\":-1}", "\"lines\" must be a whole number (0 to 1000000)"},
        {"{\"cmd\":\"logs\",\"lines\":2.5}", "\"lines\" must be a whole number (0 to 1000000)"},
        {"{\"cmd\":\"logs\",\"since\":\"5m\"}", "\"since\" must be a number of seconds ago"},
        {"{\"cmd\":\"logs\",\"follow\":1}", "\"follow\" must be true or false"},
        {"{\"cmd\":\"logs\",\"all\":true}", "\"all\" does not apply to logs"},
        {"{\"cmd\":\"logs\",\"x\":1}",
         "unknown field \"x\" (cmd, id, all, timeout, lines, since, follow)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(parse(cases[i][0], &bad, err), -1);
        assert_string_equal(err, cases[i][1]);
        sw_ctl_request_free(&bad);
    }
}

static void refused(const char *line, const char *want)
{
    sw_ctl_request r;
    char err[256] = "";
    int rc = parse(line, &r, err);
    sw_ctl_request_free(&r);
    if (rc != -1 || !strstr(err, want))
        fail_msg("\"%s\": got rc %d, \"%s\"; wanted \"%s\"", line, rc, err, want);
}

static void test_bad_requests(void **state)
{
    (void)state;
    refused("", "one JSON object per line");
    refused("status", "one JSON object per line");
    refused("[\"status\"]", "one JSON object per line");
    refused("{\"cmd\":\"status\"", "malformed JSON");
    refused("{\"cmd\":\"status\"} {}", "malformed JSON");
    refused("{\"cmd\":\"status\",\"cmd\":\"stop\"}", "malformed JSON: duplicate object key");
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
    /* YAML that is not JSON: anchors, aliases, tags, comments, single quotes, bare words */
    refused("{\"cmd\":\"status\",\"x\":&a [1]}", "malformed JSON");
    refused("{\"cmd\":\"status\",\"id\":*a}", "malformed JSON");
    refused("{\"cmd\":!!str status}", "malformed JSON");
    refused("{\"cmd\":\"status\"} # a comment", "malformed JSON");
    refused("{\"cmd\":'status'}", "malformed JSON");
    refused("{cmd: status}", "malformed JSON");
    refused("{\"cmd\":\"status\",}", "malformed JSON");
    /* strings: valid UTF-8 only, no lone surrogate, no \u0000 */
    refused("{\"cmd\":\"status\",\"id\":\"a\xff\"}", "malformed JSON");
    refused("{\"cmd\":\"status\",\"id\":\"a\\ud83d\"}", "malformed JSON");
    refused("{\"cmd\":\"status\",\"id\":\"a\\u0000b\"}", "malformed JSON: \\u0000 is not allowed");
    refused("{\"cmd\":\"stop\",\"id\":\"a:b\",\"timeout\":\"5\"}", "\"timeout\" must be");
    refused("{\"cmd\":\"stop\",\"id\":\"a:b\",\"timeout\":86401}", "\"timeout\" must be");
    char *deep = malloc(3000);
    strcpy(deep, "{\"cmd\":\"status\",\"x\":");
    size_t n = strlen(deep);
    memset(deep + n, '[', 1000);
    memset(deep + n + 1000, ']', 1000);
    strcpy(deep + n + 2000, "}");
    refused(deep, "malformed JSON");
    /* 64 levels are read (the object and 63 lists; then "x" is an unknown field), 65 are not */
    memset(deep + n, '[', 63);
    memset(deep + n + 63, ']', 63);
    strcpy(deep + n + 126, "}");
    refused(deep, "unknown field \"x\"");
    memset(deep + n, '[', 64);
    memset(deep + n + 64, ']', 64);
    strcpy(deep + n + 128, "}");
    refused(deep, "malformed JSON: nesting deeper than 64 levels");
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

/* s written by the JSON module, read back by its parser: the same text (invalid UTF-8 aside),
 * on one line of printable text. */
static void round_trip(const char *s, const char *want)
{
    json_t *v = json_pack("{s:o}", "v", sw_json_str(s));
    size_t len;
    char *text = sw_json_dump(v, false, &len);
    assert_non_null(text);
    for (size_t i = 0; i < len; i++) assert_true((unsigned char)text[i] >= 0x20);
    char err[200];
    json_t *back = sw_json_parse(text, len, 8, err, sizeof err);
    if (!back) fail_msg("%s: %s", text, err);
    assert_string_equal(json_string_value(json_object_get(back, "v")), want);
    json_decref(back);
    json_decref(v);
    free(text);
}

static void test_json_strings(void **state)
{
    (void)state;
    round_trip("plain", "plain");
    round_trip("quote \" backslash \\ slash /", "quote \" backslash \\ slash /");
    round_trip("line\nnext\ttab\r\x01\x1f\x7f", "line\nnext\ttab\r\x01\x1f\x7f");
    round_trip("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    round_trip("C1 \xc2\x85\xc2\x9b", "C1 \xc2\x85\xc2\x9b");
    round_trip("bad \xff\xc3 end", "bad \xef\xbf\xbd\xef\xbf\xbd end");
    json_t *v = json_pack("[o, o, o, o, o, o, o]", sw_json_str(NULL), sw_json_num(0.1),
                          sw_json_num(1.0 / 0.0), json_integer(-42), sw_json_num(2.0),
                          sw_json_num(-1e300), sw_json_strn("a\0b", 3));
    char *text = sw_json_dump(v, true, NULL);
    assert_string_equal(text, "[null,0.1,null,-42,2,-1e300,\"a\\u0000b\"]\n");
    free(text);
    json_decref(v);
}

/* The module's parser on its own: any value, nesting counted by arrays and objects. */
static void test_json_parse(void **state)
{
    (void)state;
    char err[200];
    json_t *v = sw_json_parse("  \"x\" ", 5, 0, err, sizeof err);
    assert_non_null(v);
    assert_string_equal(json_string_value(v), "x");
    json_decref(v);
    v = sw_json_parse("[[1]]", 5, 2, err, sizeof err);
    assert_non_null(v);
    json_decref(v);
    assert_null(sw_json_parse("[[1]]", 5, 1, err, sizeof err));
    assert_string_equal(err, "nesting deeper than 1 levels");
    assert_null(sw_json_parse("{\"a\":1,\"a\":2}", 13, 8, err, sizeof err));
    assert_non_null(strstr(err, "duplicate object key"));
    assert_non_null(strstr(err, "(column "));
    assert_null(sw_json_parse("", 0, 8, err, sizeof err));
    assert_null(sw_json_parse("1 2", 3, 8, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_requests), cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_logs_requests),  cmocka_unit_test(test_json_strings),
        cmocka_unit_test(test_json_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
