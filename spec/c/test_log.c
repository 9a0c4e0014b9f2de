/* Unit tests for host/base/log.c: the text and JSON line formats (exact lines, timestamps
 * checked for shape), escaping and quoting, invalid UTF-8, key collisions, truncation of huge
 * records, level filtering and parsing, and whole lines from concurrent writers. Every JSON
 * line is checked by a validator of its own here, not by the library that wrote it. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

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
    else if (isdigit((unsigned char)*p)) while (isdigit((unsigned char)*p)) p++;
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

#define STR(k, v) {.key = (k), .type = SW_LF_STR, .s = (v)}
#define INT(k, v) {.key = (k), .type = SW_LF_INT, .i = (v)}
#define NUM(k, v) {.key = (k), .type = SW_LF_NUM, .d = (v)}
#define BOOL(k, v) {.key = (k), .type = SW_LF_BOOL, .b = (v)}
#define RAW(k, v) {.key = (k), .type = SW_LF_JSON, .j = (v)}

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
    sw_log_field f[] = {NUM("pi", 3.25),   NUM("tenth", 0.1),       NUM("nan", NAN),  NUM("inf", -INFINITY),
                        BOOL("ok", true),   BOOL("no", false),      INT("neg", -42),  RAW("obj", J("{\"a\":[1,2]}")),
                        NUM("whole", 2.0), INT("big", INT64_MAX)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_text(fx, "INFO  s  m  pi=3.25 tenth=0.1 nan=nan inf=-inf ok=true no=false neg=-42 obj={\"a\":[1,2]} "
                    "whole=2 big=9223372036854775807\n");
}

static void test_text_quoting(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("empty", ""),       STR("space", "a b"),      STR("quote", "say \"hi\""),
                        STR("bs", "C:\\tmp"),   STR("nl", "a\nb\tc"),     STR("eq", "a=b"),
                        STR("key with space", "v"), STR("utf8", "h\xC3\xA9llo"), STR("ctl", "\x1b[31m"),
                        STR("bad", "\xFF"),     STR("", "nokey")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_text(fx, "INFO  s  m  empty=\"\" space=\"a b\" quote=\"say \\\"hi\\\"\" bs=\"C:\\\\tmp\" "
                    "nl=\"a\\nb\\tc\" eq=\"a=b\" \"key with space\"=v utf8=h\xC3\xA9llo ctl=\"\\x1b[31m\" "
                    "bad=\"\xEF\xBF\xBD\" \"\"=nokey\n");
}

static void test_text_message_escaping(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    /* a forged second line, a terminal escape, a C1 CSI and a stray byte stay on one line */
    sw_log_write(fx->log, SW_LOG_INFO, "s\nx", "line1\n12:00:00.000 ERROR fake\x1b[2J\xC2\x9B\x80 \"q\" \\", NULL, 0);
    expect_text(fx, "INFO  s\\nx  line1\\n12:00:00.000 ERROR fake\\x1b[2J\\u009b\xEF\xBF\xBD \"q\" \\\n");
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
    sw_log_field f[] = {STR("state", "running"), INT("attempt", 1), STR("reason", "dependency app:x failed")};
    sw_log_write(fx->log, SW_LOG_INFO, "app:db", "service state", f, 3);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"service state\",\"service\":\"app:db\",\"state\":\"running\","
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
    sw_log_field f[] = {NUM("pi", 3.25),    NUM("nan", NAN),        NUM("inf", INFINITY), BOOL("ok", true),
                        INT("neg", -42),    RAW("obj", J("{\"a\":[1,null]}")), NUM("small", 1e-300),
                        NUM("whole", 2.0),  RAW("nl", J("[1,\n2]")), RAW("null", NULL)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", f, sizeof f / sizeof f[0]);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"pi\":3.25,\"nan\":null,\"inf\":null,"
                    "\"ok\":true,\"neg\":-42,\"obj\":{\"a\":[1,null]},\"small\":1e-300,"
                    "\"whole\":2,\"nl\":[1,2],\"null\":null}\n");
    /* the reals of one line share the fewest digits (15 to 17) that read every one of them
     * back: 0.1 alone needs 15, 1/3 16, 0.1 + 0.2 17, so 0.1 beside it is written with 17 too
     * (read back, it is still 0.1) */
    sw_log_field g[] = {NUM("tenth", 0.1), NUM("third", 1.0 / 3), NUM("sum", 0.1 + 0.2)};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 2);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"tenth\":0.1,\"third\":0.3333333333333333}\n");
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 3);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"tenth\":0.10000000000000001,"
                    "\"third\":0.33333333333333331,\"sum\":0.30000000000000004}\n");
}

static void test_json_escaping(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("s", "q\"b\\n\n\r\t\x01\x1f\x7f"), STR("utf8", "\xC3\xA9\xF0\x9F\x98\x80"),
                        STR("bad", "a\xFF" "b\xC0\xAF" "c\xED\xA0\x80" "d\xF0\x9F"), STR("k\"ey", "v"),
                        RAW("rawbad", keep(json_pack("[o]", sw_json_str("\xFE"))))};
    sw_log_write(fx->log, SW_LOG_INFO, "s\"", "m\n", f, sizeof f / sizeof f[0]);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\\n\",\"service\":\"s\\\"\","
                    "\"s\":\"q\\\"b\\\\n\\n\\r\\t\\u0001\\u001F\x7f\",\"utf8\":\"\xC3\xA9\xF0\x9F\x98\x80\","
                    "\"bad\":\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD" "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                    "d\xEF\xBF\xBD\xEF\xBF\xBD\",\"k\\\"ey\":\"v\",\"rawbad\":[\"\xEF\xBF\xBD\"]}\n");
}

static void test_json_key_collisions(void **state)
{
    fixture *fx = open_log(state, true, SW_LOG_DEBUG, false);
    sw_log_field f[] = {STR("msg", "x"), STR("ts", "y"), INT("level", 3), STR("service", "z"), STR("other", "o")};
    sw_log_write(fx->log, SW_LOG_INFO, NULL, "m", f, 5);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"fields.msg\":\"x\",\"fields.ts\":\"y\","
                    "\"fields.level\":3,\"fields.service\":\"z\",\"other\":\"o\"}\n");
    /* a key given twice (here once through the renaming) is written once: first place, last
     * value; a key that is not UTF-8 is repaired like a value */
    sw_log_field g[] = {STR("a", "1"), STR("fields.msg", "2"), STR("msg", "3"), INT("a", 4), STR("k\xFF", "v")};
    sw_log_write(fx->log, SW_LOG_INFO, "s", "m", g, 5);
    expect_json(fx, "\"level\":\"info\",\"msg\":\"m\",\"service\":\"s\",\"a\":4,\"fields.msg\":\"3\","
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
#define N_LINES 1000

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

static void run_threads(fixture *fx, size_t pad)
{
    pthread_t t[N_THREADS];
    writer w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (writer){.log = fx->log, .id = i, .pad = pad};
        assert_int_equal(pthread_create(&t[i], NULL, write_lines, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) pthread_join(t[i], NULL);
}

/* Checks every line: well formed, and each (thread, seq) exactly once. */
static void check_lines(fixture *fx, bool json, size_t pad)
{
    char *all = strdup(contents(fx));
    static bool seen[N_THREADS][N_LINES];
    memset(seen, 0, sizeof seen);
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
        assert_false(seen[th][seq]);
        seen[th][seq] = true;
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
    run_threads(fx, 200);
    check_lines(fx, true, 200);
}

static void test_threads_text_large(void **state)
{
    fixture *fx = open_log(state, false, SW_LOG_DEBUG, false);
    run_threads(fx, 6000); /* past the stack buffer: heap records */
    check_lines(fx, false, 6000);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
