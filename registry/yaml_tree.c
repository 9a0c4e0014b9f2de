/* libyaml event loop -> sw_node tree. One parse stack frame per open collection; children are
 * gathered in a malloc'd vector and moved into the arena when the collection closes. */
#include "yaml_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "env_subst.h"

typedef struct frame {
    sw_node *node;
    sw_node **kids;
    size_t n, cap;
    const char *anchor; /* anchor of this open collection, to refuse recursive aliases */
} frame;

typedef struct anchor {
    char *name;
    sw_node *node;
} anchor;

typedef struct builder {
    sw_arena *arena;
    const char *file;
    sw_diags *diags;
    frame stack[SW_YAML_MAX_DEPTH + 1];
    int depth;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
    size_t expanded;
    sw_node *root;
    int documents;
    bool failed;
    bool values_failed; /* a value's ${env:} failed: parsing goes on to report every one */
} builder;

static void fail(builder *b, unsigned line, unsigned col, const char *msg, const char *arg)
{
    sw_diags_add(b->diags, b->file, line, col, NULL, NULL, msg, arg ? arg : "");
    b->failed = true;
}

static bool is_int_text(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* "0o17", "0x1F": the core schema's octal and hexadecimal integers. */
static bool is_radix_int(const char *s, const char *prefix, int base)
{
    if (strncmp(s, prefix, 2) != 0 || !s[2]) return false;
    for (s += 2; *s; s++) {
        int c = *s, d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : 99;
        if (d >= base) return false;
    }
    return true;
}

static bool is_float_text(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    bool digits = false;
    while (*s >= '0' && *s <= '9') {
        s++;
        digits = true;
    }
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') {
            s++;
            digits = true;
        }
    }
    if (!digits) return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == 0;
}

static bool one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0) return true;
    return false;
}

/* YAML 1.2 core schema resolution of a plain scalar. Most scalars are words, so the first
 * character rules out the special forms before any comparison. */
static void resolve_plain(sw_node *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    const char *s = n->str;
    n->scalar = SW_SCALAR_STRING;
    switch (s[0]) {
    case 0:
    case '~':
    case 'n':
    case 'N':
        if (one_of(s, nulls)) n->scalar = SW_SCALAR_NULL;
        return;
    case 't':
    case 'T':
        if (one_of(s, trues)) {
            n->scalar = SW_SCALAR_BOOL;
            n->num = 1;
        }
        return;
    case 'f':
    case 'F':
        if (one_of(s, falses)) {
            n->scalar = SW_SCALAR_BOOL;
            n->num = 0;
        }
        return;
    case '.':
    case '+':
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': break;
    default: return;
    }
    if (is_int_text(s)) {
        n->scalar = SW_SCALAR_INT;
        n->num = strtod(s, NULL);
    } else if (is_radix_int(s, "0o", 8) || is_radix_int(s, "0x", 16)) {
        n->scalar = SW_SCALAR_INT;
        n->num = (double)strtoull(s + 2, NULL, s[1] == 'o' ? 8 : 16);
    } else if (is_float_text(s)) {
        n->scalar = SW_SCALAR_FLOAT;
        n->num = strtod(s, NULL);
    } else if (one_of(s, infs)) {
        n->scalar = SW_SCALAR_FLOAT;
        n->num = INFINITY;
    } else if (one_of(s, ninfs)) {
        n->scalar = SW_SCALAR_FLOAT;
        n->num = -INFINITY;
    } else if (one_of(s, nans)) {
        n->scalar = SW_SCALAR_FLOAT;
        n->num = NAN;
    }
}

static sw_node *node_new(builder *b, sw_node_type type, const yaml_mark_t *mark)
{
    sw_node *n = sw_arena_alloc(b->arena, sizeof *n);
    n->type = type;
    n->line = (unsigned)mark->line + 1;
    n->col = (unsigned)mark->column + 1;
    n->file = b->file;
    n->weight = 1;
    return n;
}

static void remember_anchor(builder *b, const char *name, sw_node *node)
{
    if (!name) return;
    for (size_t i = 0; i < b->n_anchors; i++) {
        if (strcmp(b->anchors[i].name, name) == 0) {
            b->anchors[i].node = node;
            return;
        }
    }
    if (b->n_anchors == b->cap_anchors) {
        size_t cap = b->cap_anchors ? b->cap_anchors * 2 : 8;
        anchor *v = realloc(b->anchors, cap * sizeof *v);
        if (!v) abort();
        b->anchors = v;
        b->cap_anchors = cap;
    }
    b->anchors[b->n_anchors].name = strdup(name);
    b->anchors[b->n_anchors++].node = node;
}

static sw_node *find_anchor(builder *b, const char *name)
{
    for (size_t i = b->n_anchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, name) == 0) return b->anchors[i].node;
    return NULL;
}

static size_t sat_add(size_t a, size_t b) { return a + b < a ? (size_t)-1 : a + b; }

/* Attaches a finished node (or an alias of one) to the open collection, or makes it the root.
 * `count` is what the attachment adds to the expanded size: 1 for a new node (its children were
 * counted as they were attached), the whole weight for an alias. */
static void attach(builder *b, sw_node *n, size_t count, const yaml_mark_t *mark)
{
    b->expanded = sat_add(b->expanded, count);
    if (b->expanded > SW_YAML_MAX_EXPANDED) {
        fail(b, (unsigned)mark->line + 1, (unsigned)mark->column + 1,
             "document expands to more than %s nodes through aliases (refused: alias bomb?)",
             "1000000");
        return;
    }
    if (b->depth == 0) {
        b->root = n;
        return;
    }
    frame *f = &b->stack[b->depth - 1];
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        sw_node **v = realloc(f->kids, cap * sizeof *v);
        if (!v) abort();
        f->kids = v;
        f->cap = cap;
    }
    f->kids[f->n++] = n;
    f->node->weight = sat_add(f->node->weight, n->weight);
}

static void open_collection(builder *b, sw_node_type type, const yaml_mark_t *mark,
                            const char *anchor_name)
{
    if (b->depth >= SW_YAML_MAX_DEPTH) {
        fail(b, (unsigned)mark->line + 1, (unsigned)mark->column + 1,
             "nesting deeper than %s levels", "64");
        free((void *)anchor_name);
        return;
    }
    frame *f = &b->stack[b->depth++];
    f->n = 0; /* kids/cap survive from the last collection at this depth: no malloc per node */
    f->node = node_new(b, type, mark);
    f->anchor = anchor_name;
}

static int key_cmp(const void *pa, const void *pb)
{
    const sw_node *a = *(sw_node *const *)pa, *b = *(sw_node *const *)pb;
    return strcmp(a->str, b->str);
}

/* Every key a scalar, no key twice. Sorting keeps this O(n log n) for hostile maps. */
static void check_keys(builder *b, sw_node *map)
{
    size_t n = map->n;
    sw_node **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        sw_node *key = sw_node_key(map, i);
        if (key->type != SW_NODE_SCALAR)
            fail(b, key->line, key->col, "mapping keys must be plain strings%s", NULL);
        else keys[k++] = key;
    }
    qsort(keys, k, sizeof *keys, key_cmp);
    for (size_t i = 1; i < k; i++) {
        if (strcmp(keys[i - 1]->str, keys[i]->str) == 0) {
            sw_node *a = keys[i - 1], *c = keys[i]; /* qsort is not stable: report the later one */
            sw_node *later = a->line > c->line || (a->line == c->line && a->col > c->col) ? a : c;
            fail(b, later->line, later->col, "duplicate key \"%s\"", later->str);
        }
    }
    free(keys);
}

static void close_collection(builder *b, const yaml_mark_t *mark)
{
    frame *f = &b->stack[--b->depth];
    sw_node *n = f->node;
    n->kids = sw_arena_alloc(b->arena, (f->n ? f->n : 1) * sizeof *n->kids);
    if (f->n) memcpy(n->kids, f->kids, f->n * sizeof *n->kids);
    n->n = n->type == SW_NODE_MAP ? f->n / 2 : f->n;
    if (n->type == SW_NODE_MAP) check_keys(b, n);
    remember_anchor(b, f->anchor, n);
    free((void *)f->anchor);
    f->anchor = NULL;
    attach(b, n, 1, mark);
}

/* A mapping key is the scalar at an even position of an open mapping. */
static bool is_key(const builder *b)
{
    const frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
    return f && f->node->type == SW_NODE_MAP && f->n % 2 == 0;
}

/* ${env:NAME} in a value (env_subst.h), before a plain scalar is typed: `port: ${env:PORT}`
 * reads as a number when PORT is digits, as if written so. */
static void substitute(builder *b, sw_node *n)
{
    if (is_key(b) || !sw_env_subst_needed(n->str, n->len)) return;
    char err[300];
    if (sw_env_subst(b->arena, n->str, n->len, &n->str, &n->len, err, sizeof err) != 0) {
        sw_diags_add(b->diags, b->file, n->line, n->col, NULL, NULL, "%s", err);
        b->values_failed = true;
    }
}

static void on_scalar(builder *b, const yaml_event_t *ev)
{
    sw_node *n = node_new(b, SW_NODE_SCALAR, &ev->start_mark);
    n->str =
        sw_arena_strndup(b->arena, (const char *)ev->data.scalar.value, ev->data.scalar.length);
    n->len = ev->data.scalar.length;
    if (strlen(n->str) != n->len) {
        fail(b, n->line, n->col, "scalar contains a NUL character%s", NULL);
        return;
    }
    substitute(b, n);
    const char *tag = (const char *)ev->data.scalar.tag;
    if (ev->data.scalar.plain_implicit && !tag) resolve_plain(n);
    else n->scalar = SW_SCALAR_STRING;
    remember_anchor(b, (const char *)ev->data.scalar.anchor, n);
    attach(b, n, 1, &ev->start_mark);
}

static void on_alias(builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    for (int i = 0; i < b->depth; i++) {
        if (b->stack[i].anchor && strcmp(b->stack[i].anchor, name) == 0) {
            fail(b, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
                 "recursive alias *%s", name);
            return;
        }
    }
    sw_node *target = find_anchor(b, name);
    if (!target) {
        fail(b, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
             "unknown alias *%s", name);
        return;
    }
    attach(b, target, target->weight, &ev->start_mark);
}

static char *dup_anchor(const yaml_char_t *a) { return a ? strdup((const char *)a) : NULL; }

/* Handles one event; returns false when parsing should stop. */
static bool on_event(builder *b, yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_STREAM_END_EVENT: return false;
    case YAML_DOCUMENT_START_EVENT:
        if (++b->documents > 1) {
            fail(b, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
                 "more than one YAML document in a file%s", NULL);
            return false;
        }
        return true;
    case YAML_SCALAR_EVENT: on_scalar(b, ev); return !b->failed;
    case YAML_ALIAS_EVENT: on_alias(b, ev); return !b->failed;
    case YAML_SEQUENCE_START_EVENT:
        open_collection(b, SW_NODE_SEQ, &ev->start_mark,
                        dup_anchor(ev->data.sequence_start.anchor));
        return !b->failed;
    case YAML_MAPPING_START_EVENT:
        open_collection(b, SW_NODE_MAP, &ev->start_mark, dup_anchor(ev->data.mapping_start.anchor));
        return !b->failed;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: close_collection(b, &ev->start_mark); return !b->failed;
    default: return true;
    }
}

static void builder_free(builder *b)
{
    for (int i = 0; i <= SW_YAML_MAX_DEPTH; i++) {
        free(b->stack[i].kids);
        if (i < b->depth) free((void *)b->stack[i].anchor);
    }
    for (size_t i = 0; i < b->n_anchors; i++) free(b->anchors[i].name);
    free(b->anchors);
}

/* The reader reports encoding errors (non-UTF-8) as a byte offset, not a mark. */
static void offset_position(const char *buf, size_t len, size_t offset, unsigned *line,
                            unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (buf[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) (*col)++;
    }
}

sw_node *sw_yaml_parse(sw_arena *arena, const char *file, const char *buf, size_t len,
                       sw_diags *diags)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.arena = arena;
    b.file = file;
    b.diags = diags;

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) abort();
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            unsigned line = (unsigned)parser.problem_mark.line + 1,
                     col = (unsigned)parser.problem_mark.column + 1;
            if (parser.error == YAML_READER_ERROR)
                offset_position(buf, len, parser.problem_offset, &line, &col);
            /* The context ("while scanning a quoted scalar") is often far from the problem (the
             * end of the file): name where it started. */
            char where[64] = "";
            if (parser.context)
                snprintf(where, sizeof where, " (started at line %u, column %u)",
                         (unsigned)parser.context_mark.line + 1,
                         (unsigned)parser.context_mark.column + 1);
            sw_diags_add(diags, file, line, col, NULL, NULL, "%s: %s%s%s%s",
                         parser.error == YAML_READER_ERROR ? "invalid text" : "YAML syntax error",
                         parser.problem ? parser.problem : "unknown problem",
                         parser.context ? " " : "", parser.context ? parser.context : "", where);
            b.failed = true;
            break;
        }
        bool more = on_event(&b, &ev);
        yaml_event_delete(&ev);
        if (!more) break;
    }
    yaml_parser_delete(&parser);
    builder_free(&b);
    b.failed |= b.values_failed;
    if (!b.failed && b.root && b.root->type == SW_NODE_SCALAR && b.root->scalar == SW_SCALAR_NULL)
        b.root = NULL;
    if (!b.failed && !b.root)
        sw_diags_add(diags, file, 1, 1, NULL, NULL,
                     "empty file: expected a mapping with namespace and entries");
    return b.failed ? NULL : b.root;
}

sw_node *sw_node_get(const sw_node *map, const char *key)
{
    if (!map || map->type != SW_NODE_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++) {
        sw_node *k = sw_node_key(map, i);
        if (k->type == SW_NODE_SCALAR && strcmp(k->str, key) == 0) return sw_node_val(map, i);
    }
    return NULL;
}

const char *sw_node_describe(const sw_node *n)
{
    if (!n) return "nothing";
    if (n->type == SW_NODE_MAP) return "a mapping";
    if (n->type == SW_NODE_SEQ) return "a list";
    switch (n->scalar) {
    case SW_SCALAR_NULL: return "null";
    case SW_SCALAR_BOOL: return "a boolean";
    case SW_SCALAR_INT:
    case SW_SCALAR_FLOAT: return "a number";
    default: return "a string";
    }
}

bool sw_node_equal(const sw_node *a, const sw_node *b)
{
    if (!a || !b) return a == b;
    if (a->type != b->type || a->n != b->n) return false;
    if (a->type == SW_NODE_SCALAR)
        return a->scalar == b->scalar && a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    size_t kids = a->type == SW_NODE_MAP ? 2 * a->n : a->n;
    for (size_t i = 0; i < kids; i++)
        if (!sw_node_equal(a->kids[i], b->kids[i])) return false;
    return true;
}
