/* Unit tests for host/base/log.c: the text and JSON line formats (exact lines, timestamps
 * checked for shape), escaping and quoting, invalid UTF-8, key collisions, truncation of huge
 * records, level filtering and parsing, and whole lines from concurrent writers; the buffered
 * writer (log_writer.c) on pipes: whole lines in each thread's order, drops and their notice
 * when nobody reads, a bounded shutdown; the summaries (log_limit.c), on a clock of the
 * test's own and through the log; and the cost of a record (printed, not asserted). Every
 * JSON line is checked by a validator of its own here, not by the library that wrote it. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "log_limit.h"
#include "log_writer.h"

/* ---- a minimal JSON validator (RFC 8259, UTF-8 checked) ---- */

static const char *j_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *j_value(const char *p, int depth);

static const char *j_string(const char *p)
{
    if (*p++ != '"') return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) p++;
            else return NULL;
            continue;
        }
        if (c < 0x80) {
            p++;
            continue;
        }
        int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
        if (c >= 0xF5 || len == 0) return NULL;
        for (int i = 1; i < len; i++)
            if (((unsigned char)p[i] & 0xC0) != 0x80) return NULL;
        p += len;
    }
}

static const char *j_number(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p)) p++;
    else return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    return p;
}

static const char *j_value(const char *p, int depth)
{
    if (depth > 200) return NULL;
    p = j_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = j_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = j_string(j_ws(p));
                if (!p) return NULL;
                p = j_ws(p);
                if (*p++ != ':') return NULL;
            }
            p = j_value(p, depth + 1);
            if (!p) return NULL;
            p = j_ws(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '"') return j_string(p);
    if (strncmp(p, "true", 4) == 0) return p + 4;
    if (strncmp(p, "false", 5) == 0) return p + 5;
    if (strncmp(p, "null", 4) == 0) return p + 4;
    return j_number(p);
}

/* Whether line (without its newline) is exactly one JSON object. */
static bool json_ok(const char *line)
{
    if (*line != '{') return false;
    const char *end = j_value(line, 0);
    return end && *j_ws(end) == '\0';
}

/* ---- JSON values for SW_LF_JSON fields, released after each test ---- */

static json_t *made[16];
static size_t n_made;

static json_t *keep(json_t *v)
{
    assert_non_null(v);
    assert_true(n_made < sizeof made / sizeof made[0]);
    made[n_made++] = v;
    return v;
}

/* The value of a JSON text. */
static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v) fail_msg("J(%.40s): %s", text, e.text);
    return keep(v);
}

/* ---- fixture: a log on a temporary file ---- */

typedef struct fixture {
    FILE *f;
    sw_log *log;
    char *text; /* what was read back */
} fixture;

static int teardown(void **state)
{
    fixture *fx = *state;
    while (n_made) json_decref(made[--n_made]);
    if (fx) {
        sw_log_free(fx->log);
        if (fx->f) fclose(fx->f);
        free(fx->text);
        free(fx);
    }
    return 0;
}

static fixture *open_log(void **state, bool json, sw_log_level min, bool color)
{
    fixture *fx = calloc(1, sizeof *fx);
    *state = fx;
    fx->f = tmpfile();
    assert_non_null(fx->f);
    fx->log = sw_log_new(fx->f, json, min, color);
    assert_non_null(fx->log);
    return fx;
}

/* Everything written so far, as one string (owned by the fixture). */
static const char *contents(fixture *fx)
{
    free(fx->text);
    int fd = fileno(fx->f);
    off_t size = lseek(fd, 0, SEEK_END);
    fx->text = malloc((size_t)size + 1);
    assert_int_equal(pread(fd, fx->text, (size_t)size, 0), size);
    fx->text[size] = '\0';
    return fx->text;
}

/* Empties the file (the log writes at the descriptor's offset). */
static void reset(fixture *fx)
{
    assert_int_equal(ftruncate(fileno(fx->f), 0), 0);
    assert_int_equal(lseek(fileno(fx->f), 0, SEEK_SET), 0);
}

/* The text line without its "HH:MM:SS.mmm " prefix, after checking the prefix's shape. */
static const char *strip_time(const char *line)
{
    for (int i = 0; i < 12; i++) {
        if (i == 2 || i == 5) assert_int_equal(line[i], ':');
        else if (i == 8) assert_int_equal(line[i], '.');
        else assert_true(isdigit((unsigned char)line[i]));
    }
    assert_int_equal(line[12], ' ');
    return line + 13;
}

/* The JSON line with the ts value's shape checked and the prefix {"ts":"…", removed. */
static const char *strip_ts(const char *line)
{
    const char *pre = "{\"ts\":\"";
    assert_memory_equal(line, pre, strlen(pre));
    const char *t = line + strlen(pre); /* 2026-11-22T02:30:01.234Z */
    const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";
    for (size_t i = 0; i < strlen(shape); i++) {
        if (shape[i] == 'd') assert_true(isdigit((unsigned char)t[i]));
        else assert_int_equal(t[i], shape[i]);
    }
    assert_memory_equal(t + 24, "\",", 2);
    return t + 26;
}

#define STR(k, v)                               \
    {                                           \
        .key = (k), .type = SW_LF_STR, .s = (v) \
    }
#define INT(k, v)                               \
    {                                           \
        .key = (k), .type = SW_LF_INT, .i = (v) \
    }
#define NUM(k, v)                               \
    {                                           \
        .key = (k), .type = SW_LF_NUM, .d = (v) \
    }
#define BOOL(k, v)                               \
    {                                            \
        .key = (k), .type = SW_LF_BOOL, .b = (v) \
    }
#define RAW(k, v)                                \
    {                                            \
        .key = (k), .type = SW_LF_JSON, .j = (v) \
    }

static void expect_text(fixture *fx, const char *want)
{
    const char *got = strip_time(contents(fx));
    assert_string_equal(got, want);
    reset(fx);
}

static void expect_json(fixture *fx, const char *want)
{
    const char *all = contents(fx);
    size_t n = strlen(all);
    assert_true(n > 0 && all[n - 1] == '\n');
    assert_null(memchr(all, '\n', n - 1));
    char *line = strndup(all, n - 1);
    if (!json_ok(line)) fail_msg("not JSON: %s", line);
    free(line);
    assert_string_equal(strip_ts(all), want);
    reset(fx);
}

/* ---- text ---- */

static void test_text_line(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("state", "running"), INT("attempt", 1)};
    sw_log_write(fx->log, SW_LOG_INFO, "app:db", "service state", f, 2);
    expect_text(fx, "INFO  app:db  service state  state=running attempt=1\n");
    sw_log_write(fx->log, SW_LOG_DEBUG, "app:db", "x", NULL, 0);
    expect_text(fx, "DEBUG app:db  x\n");
    sw_log_write(fx->log, SW_LOG_WARN, NULL, "no service", NULL, 0);
    expect_text(fx, "WARN  -  no service\n");
    sw_log_write(fx->log, SW_LOG_ERROR, "s", NULL, f, 0);
    expect_text(fx, "ERROR s  \n");
}

static void test_text_values(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    sw_log_field f[] = {
        NUM("pi", 3.25),   NUM("tenth", 0.1),    NUM("nan", NAN), NUM("inf", -INFINITY),
        BOOL("ok", true),  BOOL("no", false),    INT("neg", -42), RAW("obj", J("{\"a\":[1,2]}")),
        NUM("whole", 2.0), INT("big", INT64_MAX)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_text(
        fx,
        "INFO  s  m  pi=3.25 tenth=0.1 nan=nan inf=-inf ok=true no=false neg=-42 obj={\"a\":[1,2]} "
        "whole=2 big=9223372036854775807\n");
}

static void test_text_quoting(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("empty", ""),
                        STR("space", "a b"),
                        STR("quote", "say \"hi\""),
                        STR("bs", "C:\\tmp"),
                        STR("nl", "a\nb\tc"),
                        STR("eq", "a=b"),
                        STR("key with space", "v"),
                        STR("utf8", "h\xC3\xA9llo"),
                        STR("ctl", "\x1b[31m"),
                        STR("bad", "\xFF"),
                        STR("", "nokey")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_text(
        fx, "INFO  s  m  empty=\"\" space=\"a b\" quote=\"say \\\"hi\\\"\" bs=\"C:\\\\tmp\" "
            "nl=\"a\\nb\\tc\" eq=\"a=b\" \"key with space\"=v utf8=h\xC3\xA9llo ctl=\"\\x1b[31m\" "
            "bad=\"\xEF\xBF\xBD\" \"\"=nokey\n");
}

static void test_text_message_escaping(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    /* a forged second line, a terminal escape, a C1 CSI and a stray byte stay on one line */
    sw_log_write(fx->log, SW_LOG_INFO, "s\nx",
                 "line1\n12:00:00.000 ERROR fake\x1b[2J\xC2\x9B\x80 \"q\" \\", NULL, 0);
    expect_text(
        fx, "INFO  s\\nx  line1\\n12:00:00.000 ERROR fake\\x1b[2J\\u009b\xEF\xBF\xBD \"q\" \\\n");
    /* a JSON value is written compact, on one line */
    sw_log_field f[] = {RAW("j", J("{\"a\":\n[1, \"x\\ny\"]}"))};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, 1);
    expect_text(fx, "INFO  s  m  j={\"a\":[1,\"x\\ny\"]}\n");
}

static void test_text_color(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, true);
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", NULL, 0);
    expect_text(fx, "\x1b[32mINFO\x1b[0m  s  m\n");
    sw_log_write(fx->log, SW_LOG_ERROR, "s", "m", NULL, 0);
    expect_text(fx, "\x1b[1;31mERROR\x1b[0m s  m\n");
}

static void test_levels(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_WARN, false);
    assert_false(sw_log_enabled(fx->log, SW_LOG_DEBUG));
    assert_false(sw_log_enabled(fx->log, SW_LOG_INFO));
    assert_true(sw_log_enabled(fx->log, SW_LOG_WARN));
    assert_true(sw_log_enabled(fx->log, SW_LOG_ERROR));
    assert_false(sw_log_enabled(NULL, SW_LOG_ERROR));
    sw_log_write(fx->log, SW_LOG_INFO, "s", "hidden", NULL, 0);
    sw_log_write(fx->log, SW_LOG_DEBUG, "s", "hidden", NULL, 0);
    assert_string_equal(contents(fx), "");
    sw_log_write(fx->log, SW_LOG_ERROR, "s", "shown", NULL, 0);
    assert_non_null(strstr(contents(fx), "shown"));
    sw_log_write(NULL, SW_LOG_ERROR, "s", "no log", NULL, 0); /* a no-op */

    assert_int_equal(sw_log_level_parse("debug"), SW_LOG_DEBUG);
    assert_int_equal(sw_log_level_parse("info"), SW_LOG_INFO);
    assert_int_equal(sw_log_level_parse("warn"), SW_LOG_WARN);
    assert_int_equal(sw_log_level_parse("warning"), SW_LOG_WARN);
    assert_int_equal(sw_log_level_parse("ERROR"), SW_LOG_ERROR);
    assert_int_equal(sw_log_level_parse("verbose"), -1);
    assert_int_equal(sw_log_level_parse(""), -1);
    assert_int_equal(sw_log_level_parse(NULL), -1);
}

/* ---- JSON ---- */

static void test_json_line(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, true /* ignored in JSON */);
    sw_log_field f[] = {STR("state", "running"), INT("attempt", 1),
                        STR("reason", "dependency app:x failed")};
    sw_log_write(fx->log, SW_LOG_INFO, "app:db", "service state", f, 3);
    expect_json(
        fx,
        "\"level\":\"info\",\"msg\":\"service state\",\"service\":\"app:db\",\"state\":\"running\","
        "\"attempt\":1,\"reason\":\"dependency app:x failed\"}\n");
    sw_log_write(fx->log, SW_LOG_WARN, NULL, "host", NULL, 0);
    expect_json(fx, "\"level\":\"warn\",\"msg\":\"host\"}\n");
    sw_log_write(fx->log, SW_LOG_DEBUG, "s", "d", NULL, 0);
    expect_json(fx, "\"level\":\"debug\",\"msg\":\"d\",\"service\":\"s\"}\n");
    sw_log_write(fx->log, SW_LOG_ERROR, "s", "e", NULL, 0);
    expect_json(fx, "\"level\":\"error\",\"msg\":\"e\",\"service\":\"s\"}\n");
}

static void test_json_values(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    sw_log_field f[] = {NUM("pi", 3.25),      NUM("nan", NAN),   NUM("inf", INFINITY),
                        BOOL("ok", true),     INT("neg", -42),   RAW("obj", J("{\"a\":[1,null]}")),
                        NUM("small", 1e-300), NUM("whole", 2.0), RAW("nl", J("[1,\n2]")),
                        RAW("null", NULL)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_json(
        fx,
        "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"pi\":3.25,\"nan\":null,\"inf\":null,"
        "\"ok\":true,\"neg\":-42,\"obj\":{\"a\":[1,null]},\"small\":1e-300,"
        "\"whole\":2,\"nl\":[1,2],\"null\":null}\n");
    /* the reals of one line share the fewest digits (15 to 17) that read every one of them
     * back: 0.1 alone needs 15, 1/3 16, 0.1 + 0.2 17, so 0.1 beside it is written with 17 too
     * (read back, it is still 0.1) */
    sw_log_field g[] = {NUM("tenth", 0.1), NUM("third", 1.0 / 3), NUM("sum", 0.1 + 0.2)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 2);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"tenth\":0.1,\"third\":0."
                    "3333333333333333}\n");
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 3);
    expect_json(fx,
                "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"tenth\":0.10000000000000001,"
                "\"third\":0.33333333333333331,\"sum\":0.30000000000000004}\n");
}

static void test_json_escaping(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    sw_log_field f[] = {
        STR("s", "q\"b\\n\n\r\t\x01\x1f\x7f"), STR("utf8", "\xC3\xA9\xF0\x9F\x98\x80"),
        STR("bad", "a\xFF"
                   "b\xC0\xAF"
                   "c\xED\xA0\x80"
                   "d\xF0\x9F"),
        STR("k\"ey", "v"), RAW("rawbad", keep(json_pack("[o]", sw_json_str("\xFE"))))};
    sw_log_write(fx->log, SW_LOG_INFO, "s\"", "m\n", f, sizeof f / sizeof f[0]);
    expect_json(
        fx,
        "\"level\":\"info\",\"msg\":\"m\\n\",\"service\":\"s\\\"\","
        "\"s\":\"q\\\"b\\\\n\\n\\r\\t\\u0001\\u001F\x7f\",\"utf8\":\"\xC3\xA9\xF0\x9F\x98\x80\","
        "\"bad\":\"a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD\xEF\xBF\xBD"
        "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
        "d\xEF\xBF\xBD\xEF\xBF\xBD\",\"k\\\"ey\":\"v\",\"rawbad\":[\"\xEF\xBF\xBD\"]}\n");
}

static void test_json_key_collisions(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("msg", "x"), STR("ts", "y"), INT("level", 3), STR("service", "z"),
                        STR("other", "o")};
    sw_log_write(fx->log, SW_LOG_INFO, NULL, "m", f, 5);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"fields.msg\":\"x\",\"fields.ts\":\"y\","
                    "\"fields.level\":3,\"fields.service\":\"z\",\"other\":\"o\"}\n");
    /* a key given twice (here once through the renaming) is written once: first place, last
     * value; a key that is not UTF-8 is repaired like a value */
    sw_log_field g[] = {STR("a", "1"), STR("fields.msg", "2"), STR("msg", "3"), INT("a", 4),
                        STR("k\xFF", "v")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 5);
    expect_json(fx,
                "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"a\":4,\"fields.msg\":\"3\","
                "\"k\xEF\xBF\xBD\":\"v\"}\n");
}

/* ---- truncation ---- */

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_truncation_json(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    char *big = repeat('x', 100000);
    char *esc = repeat('\n', 30000); /* each becomes two bytes */
    sw_log_field f[] = {STR("a", "first"), STR("big", big), STR("after", "dropped")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, 3);
    const char *out = contents(fx);
    size_t n = strlen(out);
    assert_true(n <= 65536);
    assert_true(n > 60000);
    char *line = strndup(out, n - 1);
    assert_true(json_ok(line));
    assert_non_null(strstr(line, "\"a\":\"first\""));
    assert_non_null(strstr(line, "x\xE2\x80\xA6\""));
    assert_null(strstr(line, "after"));
    assert_non_null(strstr(line, ",\"truncated\":true}"));
    free(line);
    reset(fx);

    /* the message itself, full of escapes: cut between two escapes, never inside one */
    sw_log_write(fx->log, SW_LOG_INFO, "s", esc, f, 1);
    out = contents(fx);
    n = strlen(out);
    assert_true(n <= 65536);
    line = strndup(out, n - 1);
    assert_true(json_ok(line));
    free(line);
    reset(fx);

    /* raw JSON that does not fit is replaced by "…", still valid */
    char *raw = malloc(80010);
    raw[0] = '[';
    for (int i = 0; i < 40000; i++) memcpy(raw + 1 + 2 * i, "1,", 2);
    memcpy(raw + 80000, "1]", 3);
    sw_log_field g[] = {RAW("raw", J(raw))};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 1);
    out = contents(fx);
    line = strndup(out, strlen(out) - 1);
    assert_true(json_ok(line));
    assert_non_null(strstr(line, "\"raw\":\"\xE2\x80\xA6\",\"truncated\":true}"));
    free(line);
    reset(fx);

    /* a message past the cap: cut at a character boundary, nothing after it */
    char *wide = malloc(3 * 30000 + 1);
    for (int i = 0; i < 30000; i++) memcpy(wide + 3 * i, "\xE2\x82\xAC", 3); /* € */
    wide[3 * 30000] = '\0';
    sw_log_write(fx->log, SW_LOG_INFO, "s", wide, f, 1);
    out = contents(fx);
    n = strlen(out);
    assert_true(n <= 65536 && n > 65000);
    line = strndup(out, n - 1);
    assert_true(json_ok(line));
    assert_non_null(strstr(line, "\xE2\x82\xAC\xE2\x80\xA6\",\"truncated\":true}"));
    assert_null(strstr(line, "\"service\""));
    assert_null(strstr(line, "first"));
    free(line);
    free(wide);
    free(raw);
    free(big);
    free(esc);
}

static void test_truncation_text(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    char *big = repeat('y', 100000);
    sw_log_field f[] = {STR("k", "v"), STR("big", big), STR("after", "dropped")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, 3);
    const char *out = contents(fx);
    size_t n = strlen(out);
    assert_true(n <= 65536 && n > 60000);
    assert_null(memchr(out, '\n', n - 1));
    assert_memory_equal(out + n - 4, "\xE2\x80\xA6\n", 4);
    assert_null(strstr(out, "after"));
    reset(fx);

    sw_log_field q[] = {STR("big", "a b"), STR("huge", big)};
    big[0] = ' '; /* quoted value: the quote is closed after the mark */
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", q, 2);
    out = contents(fx);
    n = strlen(out);
    assert_memory_equal(out + n - 5, "\xE2\x80\xA6\"\n", 5);
    reset(fx);

    sw_log_write(fx->log, SW_LOG_INFO, "s", big, NULL, 0);
    out = contents(fx);
    n = strlen(out);
    assert_true(n <= 65536);
    assert_memory_equal(out + n - 4, "\xE2\x80\xA6\n", 4);
    free(big);
}

/* ---- threads ---- */

#define N_THREADS 4
#define N_LINES   1000

typedef struct writer {
    sw_log *log;
    int id;
    size_t pad;
} writer;

static void *write_lines(void *arg)
{
    writer *w = arg;
    char *pad = repeat('a' + w->id, w->pad);
    for (int i = 0; i < N_LINES; i++) {
        sw_log_field f[] = {INT("thread", w->id), INT("seq", i), STR("pad", pad)};
        sw_log_write(w->log, SW_LOG_INFO, "app:svc", "tick", f, 3);
    }
    free(pad);
    return NULL;
}

static void run_threads(sw_log *log, size_t pad)
{
    pthread_t t[N_THREADS];
    writer w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (writer){.log = log, .id = i, .pad = pad};
        assert_int_equal(pthread_create(&t[i], NULL, write_lines, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) pthread_join(t[i], NULL);
}

/* Checks every line of text: well formed, each (thread, seq) exactly once, and each thread's
 * lines in the order it wrote them. */
static void check_text(const char *text, bool json, size_t pad)
{
    char *all = strdup(text);
    int last[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) last[i] = -1;
    size_t lines = 0;
    char *save = NULL;
    for (char *line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int th = -1, seq = -1;
        const char *p;
        if (json) {
            if (!json_ok(line)) fail_msg("line %zu is not JSON: %.80s", lines, line);
            p = strstr(line, "\"thread\":");
            assert_non_null(p);
            assert_int_equal(sscanf(p, "\"thread\":%d,\"seq\":%d", &th, &seq), 2);
        } else {
            p = strstr(strip_time(line), "INFO  app:svc  tick  thread=");
            assert_non_null(p);
            assert_int_equal(sscanf(p, "INFO  app:svc  tick  thread=%d seq=%d", &th, &seq), 2);
        }
        assert_true(th >= 0 && th < N_THREADS && seq >= 0 && seq < N_LINES);
        assert_int_equal(seq, last[th] + 1); /* once each, in order */
        last[th] = seq;
        const char *pv = strstr(line, json ? "\"pad\":\"" : "pad=");
        assert_non_null(pv);
        pv += json ? 7 : 4;
        for (size_t i = 0; i < pad; i++) assert_int_equal(pv[i], 'a' + th);
        lines++;
    }
    assert_int_equal(lines, N_THREADS * N_LINES);
    free(all);
}

static void test_threads_json(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    run_threads(fx->log, 200);
    check_text(contents(fx), true, 200);
}

static void test_threads_text_large(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    run_threads(fx->log, 6000); /* past the stack buffer: heap records */
    check_text(contents(fx), false, 6000);
}

/* ---- the buffered writer, on a pipe ---- */

typedef struct piped {
    int rd;
    FILE *out; /* the write end, for the log */
    pthread_t reader;
    bool reading;
    char *text;
    size_t len, cap;
} piped;

static void *read_pipe(void *arg)
{
    piped *p = arg;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(p->rd, buf, sizeof buf)) > 0) {
        while (p->len + (size_t)n + 1 > p->cap)
            p->text = realloc(p->text, p->cap = p->cap ? p->cap * 2 : 1 << 16);
        memcpy(p->text + p->len, buf, (size_t)n);
        p->len += (size_t)n;
    }
    return NULL;
}

/* A pipe whose reader has not started; size: its capacity (0: the system's). */
static void pipe_open(piped *p, int size)
{
    int fds[2];
    memset(p, 0, sizeof *p);
    assert_int_equal(pipe(fds), 0);
    if (size) assert_true(fcntl(fds[1], F_SETPIPE_SZ, size) >= size);
    p->rd = fds[0];
    p->out = fdopen(fds[1], "w");
    assert_non_null(p->out);
}

static void pipe_read(piped *p)
{
    assert_int_equal(pthread_create(&p->reader, NULL, read_pipe, p), 0);
    p->reading = true;
}

/* Closes the write end (after sw_log_free) and returns all that was read (caller frees). */
static char *pipe_close(piped *p)
{
    fclose(p->out);
    if (!p->reading) pipe_read(p);
    pthread_join(p->reader, NULL);
    close(p->rd);
    if (!p->text) p->text = calloc(1, 1);
    p->text[p->len] = '\0';
    return p->text;
}

static sw_log *open_buffered(piped *p, bool json, size_t bytes)
{
    sw_log_options o = sw_log_defaults(json, SW_LOG_DEBUG, false);
    o.mode = SW_LOG_BUFFERED;
    o.buffer_bytes = bytes;
    sw_log *log = sw_log_open(p->out, &o);
    assert_non_null(log);
    return log;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whole lines in each thread's order through the ring, which holds them all (about 8 MB of
 * text with records past the stack buffer, 1 MB of JSON): nothing drops however slow the
 * reader. */
static void threads_buffered(bool json)
{
    piped p;
    pipe_open(&p, 0);
    pipe_read(&p);
    size_t pad = json ? 200 : 2000;
    sw_log *log = open_buffered(&p, json, 16u << 20);
    run_threads(log, pad);
    sw_log_free(log);
    char *text = pipe_close(&p);
    check_text(text, json, pad);
    free(text);
}

static void test_buffered_threads_json(void **state)
{
    (void)state;
    threads_buffered(true);
}

static void test_buffered_threads_text(void **state)
{
    (void)state;
    threads_buffered(false);
}

/* Nobody reads a 4 KB pipe: 2,000 records never block the caller, the ring (8 KB) fills and
 * the rest drop. Then the reader starts: what got in comes out in order, and each gap is one
 * notice "N log lines dropped" telling its exact size. */
static void drops(bool json)
{
    piped p;
    pipe_open(&p, 4096);
    sw_log *log = open_buffered(&p, json, 8192);
    enum { N = 2000 };
    double t0 = seconds();
    for (int i = 0; i < N; i++) {
        sw_log_field f[] = {INT("seq", i), STR("pad", "0123456789012345678901234567890123456789")};
        sw_log_write(log, SW_LOG_INFO, "app:svc", "tick", f, 2);
    }
    assert_true(seconds() - t0 < 5);                 /* it would hang for good if a write blocked */
    assert_false(sw_log_flush(log, 50 * 1000000LL)); /* stuck */
    pipe_read(&p);
    assert_true(sw_log_flush(log, 10 * 1000000000LL));
    sw_log_field f[] = {INT("seq", N)};
    sw_log_write(log, SW_LOG_INFO, "app:svc", "tick", f, 1);
    sw_log_free(log);
    char *text = pipe_close(&p);
    long next = 0, gap = 0, notices = 0, records = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long seq, dropped;
        if (json && !json_ok(line)) fail_msg("not JSON: %s", line);
        const char *body = json ? strip_ts(line) : strip_time(line);
        if ((json &&
             sscanf(body, "\"level\":\"warn\",\"msg\":\"%ld log lines dropped\",\"dropped\":%ld}",
                    &gap, &dropped) == 2) ||
            (!json &&
             sscanf(body, "WARN  -  %ld log lines dropped  dropped=%ld", &gap, &dropped) == 2)) {
            assert_int_equal(gap, dropped);
            assert_true(gap > 0);
            next += gap;
            notices++;
            continue;
        }
        const char *at = strstr(body, json ? "\"seq\":" : "seq=");
        assert_non_null(at);
        assert_int_equal(sscanf(at + (json ? 6 : 4), "%ld", &seq), 1);
        assert_int_equal(seq, next); /* nothing lost without a notice, nothing twice */
        next++;
        records++;
    }
    assert_int_equal(next, N + 1);
    assert_true(notices >= 1);
    assert_true(records > 1 && records < N);
    print_message("    %ld of %d records written, %ld notice(s)\n", records, N + 1, notices);
    free(text);
}

static void test_drops_text(void **state)
{
    (void)state;
    drops(false);
}

static void test_drops_json(void **state)
{
    (void)state;
    drops(true);
}

/* A reader that never reads: sw_log_free waits for the flush timeout, then gives up. */
static void test_shutdown_stuck_reader(void **state)
{
    (void)state;
    piped p;
    pipe_open(&p, 4096);
    sw_log_options o = sw_log_defaults(false, SW_LOG_DEBUG, false);
    o.mode = SW_LOG_BUFFERED;
    o.flush_timeout_ns = 300 * 1000000LL;
    sw_log *log = sw_log_open(p.out, &o);
    for (int i = 0; i < 2000; i++) {
        sw_log_field f[] = {INT("seq", i)};
        sw_log_write(log, SW_LOG_INFO, "app:svc", "tick", f, 1);
    }
    double t0 = seconds();
    sw_log_free(log);
    double took = seconds() - t0;
    assert_true(took >= 0.25 && took < 5);
    free(pipe_close(&p));
}

/* ---- summaries ---- */

typedef struct verdict {
    bool pass;
    size_t n_before;
    sw_log_summary before[2];
    int64_t wake;
} verdict;

static verdict check_at(sw_log_limit *l, int64_t t, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *f, size_t n)
{
    verdict v;
    v.pass = sw_log_limit_check(l, t, level, service, msg, f, n, v.before, &v.n_before, &v.wake);
    return v;
}

static void expect_summary(verdict *v, sw_log_level level, const char *service, const char *msg,
                           const char *reason, uint64_t n)
{
    assert_int_equal(v->n_before, 1);
    sw_log_summary *s = &v->before[0];
    assert_int_equal(s->level, level);
    assert_string_equal(s->service, service);
    assert_string_equal(s->msg, msg);
    if (reason) assert_string_equal(s->reason, reason);
    else assert_null(s->reason);
    assert_int_equal(s->suppressed, n);
    sw_log_summary_clear(s);
}

typedef struct collected {
    int n;
    sw_log_summary s[512];
} collected;

static void collect(void *arg, const sw_log_summary *s)
{
    collected *c = arg;
    assert_true(c->n < 512);
    sw_log_summary *d = &c->s[c->n++];
    *d = *s;
    d->service = s->service ? strdup(s->service) : NULL;
    d->msg = strdup(s->msg);
    d->reason = s->reason ? strdup(s->reason) : NULL;
    d->error = s->error ? strdup(s->error) : NULL;
}

static void collected_clear(collected *c)
{
    for (int i = 0; i < c->n; i++) sw_log_summary_clear(&c->s[i]);
    c->n = 0;
}

/* The rules on a clock of our own: burst 3 per window of 1000 ns. */
static void test_limit_rules(void **state)
{
    (void)state;
    sw_log_limit *l = sw_log_limit_new(3, 1000);
    sw_log_field f[] = {STR("state", "failed"), INT("attempt", 1), STR("reason", "boom"),
                        NUM("next_attempt", 0)};
    assert_true(sw_log_limit_exempt(l, SW_LOG_INFO));
    assert_false(sw_log_limit_exempt(l, SW_LOG_WARN));
    /* attempt, next_attempt and state differ: still identical */
    for (int t = 0; t < 3; t++) {
        f[0].s = t == 1 ? "starting" : "failed";
        f[1].i = t;
        f[3].d = t * 0.5;
        verdict v = check_at(l, 10 + t, SW_LOG_WARN, "app:a", "service state", f, 4);
        assert_true(v.pass);
        assert_int_equal(v.n_before, 0);
        assert_int_equal(v.wake, 0);
    }
    verdict v = check_at(l, 13, SW_LOG_WARN, "app:a", "service state", f, 4);
    assert_false(v.pass);
    assert_int_equal(v.wake, 1010); /* the window's end: a summary is due then */
    v = check_at(l, 14, SW_LOG_WARN, "app:a", "service state", f, 4);
    assert_false(v.pass);
    assert_int_equal(v.wake, 0);
    /* another service, another level, another message, no reason: their own budgets */
    assert_true(check_at(l, 15, SW_LOG_WARN, "app:b", "service state", f, 4).pass);
    assert_true(check_at(l, 15, SW_LOG_ERROR, "app:a", "service state", f, 4).pass);
    assert_true(check_at(l, 15, SW_LOG_WARN, "app:a", "other", f, 4).pass);
    assert_true(check_at(l, 15, SW_LOG_WARN, NULL, "service state", f, 4).pass);
    /* app:a storms: its info records get the same budget; other services' do not */
    assert_false(sw_log_limit_exempt(l, SW_LOG_INFO));
    sw_log_field info[] = {STR("state", "starting"), INT("attempt", 9)};
    for (int i = 0; i < 3; i++)
        assert_true(check_at(l, 20 + i, SW_LOG_INFO, "app:a", "service state", info, 2).pass);
    assert_false(check_at(l, 23, SW_LOG_INFO, "app:a", "service state", info, 2).pass);
    assert_true(
        check_at(l, 23, SW_LOG_DEBUG, "app:a", "debug", NULL, 0).pass); /* a budget of its own */
    for (int i = 0; i < 10; i++)
        assert_true(check_at(l, 24, SW_LOG_INFO, "app:c", "service state", info, 2).pass);
    /* a new reason gets through at once, after the summary of the old one */
    f[2].s = "bang";
    v = check_at(l, 30, SW_LOG_WARN, "app:a", "service state", f, 4);
    assert_true(v.pass);
    expect_summary(&v, SW_LOG_WARN, "app:a", "service state", "boom", 2);
    /* the `error` field counts too; absent and empty differ */
    sw_log_field e1[] = {STR("error", "x")}, e2[] = {STR("error", "y")}, e3[] = {STR("error", "")};
    for (int i = 0; i < 3; i++)
        assert_true(check_at(l, 40, SW_LOG_ERROR, "app:d", "process failed", e1, 1).pass);
    assert_false(check_at(l, 41, SW_LOG_ERROR, "app:d", "process failed", e1, 1).pass);
    v = check_at(l, 42, SW_LOG_ERROR, "app:d", "process failed", e2, 1);
    assert_true(v.pass);
    assert_int_equal(v.n_before, 1);
    assert_string_equal(v.before[0].error, "x");
    sw_log_summary_clear(&v.before[0]);
    assert_true(check_at(l, 43, SW_LOG_ERROR, "app:d", "process failed", e3, 1).pass);
    assert_true(check_at(l, 44, SW_LOG_ERROR, "app:d", "process failed", NULL, 0).pass);
    /* the ends of windows and storms: app:a's storm ends at 1010, its info window at 1020 (a
     * summary), app:d's storm at 1040; then info records are exempt again */
    collected c = {0};
    assert_int_equal(sw_log_limit_expire(l, 1000, false, collect, &c), 1010);
    assert_int_equal(c.n, 0);
    assert_int_equal(sw_log_limit_expire(l, 1020, false, collect, &c), 1040);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.s[0].level, SW_LOG_INFO);
    assert_string_equal(c.s[0].msg, "service state");
    assert_int_equal(c.s[0].suppressed, 1);
    collected_clear(&c);
    assert_false(sw_log_limit_exempt(l, SW_LOG_INFO));
    assert_int_equal(sw_log_limit_expire(l, 1040, false, collect, &c), 0);
    assert_int_equal(c.n, 0);
    assert_true(sw_log_limit_exempt(l, SW_LOG_INFO));
    /* a window that ended without a tick: the next record gets through after its summary */
    for (int i = 0; i < 4; i++) check_at(l, 2000, SW_LOG_WARN, "app:e", "m", NULL, 0);
    v = check_at(l, 3000, SW_LOG_WARN, "app:e", "m", NULL, 0);
    assert_true(v.pass);
    expect_summary(&v, SW_LOG_WARN, "app:e", "m", NULL, 1);
    /* at the end, all that is left */
    for (int i = 0; i < 5; i++) check_at(l, 3001, SW_LOG_ERROR, "app:f", "m", NULL, 0);
    sw_log_limit_expire(l, 3002, true, collect, &c);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.s[0].suppressed, 2);
    collected_clear(&c);
    sw_log_limit_free(l);
}

/* Many keys: slots are reused, and an evicted slot's summary comes out first. */
static void test_limit_eviction(void **state)
{
    (void)state;
    sw_log_limit *l = sw_log_limit_new(1, 1000000);
    uint64_t told = 0, suppressed = 0;
    char msg[32];
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 2000; k++)
            for (int twice = 0; twice < 2; twice++) { /* the second is suppressed */
                snprintf(msg, sizeof msg, "m%d", k);
                verdict v = check_at(l, 1 + round, SW_LOG_WARN, "app:a", msg, NULL, 0);
                if (round == 0) assert_int_equal(v.pass, !twice);
                suppressed += !v.pass;
                for (size_t i = 0; i < v.n_before; i++) {
                    told += v.before[i].suppressed;
                    sw_log_summary_clear(&v.before[i]);
                }
            }
    collected c = {0};
    sw_log_limit_expire(l, 10, true, collect, &c); /* at most the slots' count */
    for (int i = 0; i < c.n; i++) told += c.s[i].suppressed;
    collected_clear(&c);
    assert_true(suppressed >= 2000);
    assert_int_equal(told, suppressed); /* every suppressed record told once */
    sw_log_limit_free(l);
}

/* Through the log: a burst of 2 per 300 ms; the summary comes at the window's end by itself,
 * at sw_log_flush, and at sw_log_free. */
static void test_summary_lines(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    *state = fx;
    fx->f = tmpfile();
    sw_log_options o = sw_log_defaults(true, SW_LOG_DEBUG, false);
    o.burst = 2;
    o.window_ns = 300 * 1000000LL;
    fx->log = sw_log_open(fx->f, &o);
    for (int i = 0; i < 10; i++) {
        sw_log_field f[] = {STR("error", "boom"), INT("n", i)};
        sw_log_write(fx->log, SW_LOG_ERROR, "app:x", "process failed", f, 2);
    }
    const char *all = contents(fx);
    assert_non_null(strstr(all, "\"n\":1}"));
    assert_null(strstr(all, "\"n\":2}"));
    double t0 = seconds();
    while (!strstr(contents(fx), "suppressed") && seconds() - t0 < 10) usleep(10000);
    all = contents(fx);
    const char *line = strstr(all, "{\"ts\"");
    line = strstr(line + 1, "{\"ts\"");
    line = strstr(line + 1, "{\"ts\""); /* the third line */
    assert_non_null(line);
    char *one = strndup(line, strlen(line) - 1);
    assert_true(json_ok(one));
    free(one);
    assert_string_equal(
        strip_ts(line),
        "\"level\":\"error\",\"msg\":\"8 similar records suppressed\",\"service\":\"app:x\","
        "\"suppressed\":8,\"message\":\"process failed\",\"error\":\"boom\"}\n");
    reset(fx);
    /* sw_log_flush tells what it has counted at once */
    for (int i = 0; i < 4; i++) {
        sw_log_field f[] = {STR("error", "boom")};
        sw_log_write(fx->log, SW_LOG_ERROR, "app:x", "process failed", f, 1);
    }
    assert_true(sw_log_flush(fx->log, 1000000000));
    assert_non_null(strstr(contents(fx), "\"msg\":\"2 similar records suppressed\""));
    reset(fx);
    for (int i = 0; i < 5; i++) {
        sw_log_field f[] = {STR("error", "boom")};
        sw_log_write(fx->log, SW_LOG_ERROR, "app:x", "process failed", f, 1);
    }
    sw_log_free(fx->log);
    fx->log = NULL;
    all = contents(fx);
    assert_non_null(strstr(all, "\"msg\":\"3 similar records suppressed\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_text_line, teardown),
        cmocka_unit_test_teardown(test_text_values, teardown),
        cmocka_unit_test_teardown(test_text_quoting, teardown),
        cmocka_unit_test_teardown(test_text_message_escaping, teardown),
        cmocka_unit_test_teardown(test_text_color, teardown),
        cmocka_unit_test_teardown(test_levels, teardown),
        cmocka_unit_test_teardown(test_json_line, teardown),
        cmocka_unit_test_teardown(test_json_values, teardown),
        cmocka_unit_test_teardown(test_json_escaping, teardown),
        cmocka_unit_test_teardown(test_json_key_collisions, teardown),
        cmocka_unit_test_teardown(test_truncation_json, teardown),
        cmocka_unit_test_teardown(test_truncation_text, teardown),
        cmocka_unit_test_teardown(test_threads_json, teardown),
        cmocka_unit_test_teardown(test_threads_text_large, teardown),
        cmocka_unit_test(test_buffered_threads_json),
        cmocka_unit_test(test_buffered_threads_text),
        cmocka_unit_test(test_drops_text),
        cmocka_unit_test(test_drops_json),
        cmocka_unit_test(test_shutdown_stuck_reader),
        cmocka_unit_test(test_limit_rules),
        cmocka_unit_test(test_limit_eviction),
        cmocka_unit_test_teardown(test_summary_lines, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
