/* The schema walker: one function per field type, each validating a node and writing the typed
 * value at the field's offset. */
#include "schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

void sw_parse_error(sw_parse *p, const sw_node *n, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sw_diags_add(p->diags, p->file, n ? n->line : 0, n ? n->col : 0, p->entry_id, p->path, "%s",
                 msg);
    p->ok = false;
}

size_t sw_path_push(sw_parse *p, const char *name)
{
    size_t saved = p->path_len, len = strlen(name), sep = saved ? 1 : 0;
    if (saved + sep >= sizeof p->path - 1) return saved; /* too deep to name: keep the prefix */
    if (saved + sep + len >= sizeof p->path) len = sizeof p->path - 1 - saved - sep;
    if (sep) p->path[p->path_len++] = '.';
    memcpy(p->path + p->path_len, name, len);
    p->path_len += len;
    p->path[p->path_len] = 0;
    return saved;
}

size_t sw_path_push_index(sw_parse *p, size_t i)
{
    size_t saved = p->path_len;
    int w = snprintf(p->path + p->path_len, sizeof p->path - p->path_len, "[%zu]", i);
    if (w > 0) p->path_len += (size_t)w;
    if (p->path_len >= sizeof p->path) p->path_len = sizeof p->path - 1;
    return saved;
}

void sw_path_pop(sw_parse *p, size_t saved)
{
    p->path_len = saved;
    p->path[saved] = 0;
}

bool sw_valid_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

const char *sw_qualify(sw_parse *p, const char *name)
{
    if (strchr(name, ':')) return sw_arena_strdup(p->arena, name);
    return sw_arena_printf(p->arena, "%s:%s", p->ns, name);
}

bool sw_valid_id(const char *id)
{
    const char *colon = strchr(id, ':');
    if (!colon || strchr(colon + 1, ':')) return false;
    char ns[256];
    size_t len = (size_t)(colon - id);
    if (len == 0 || len >= sizeof ns) return false;
    memcpy(ns, id, len);
    ns[len] = 0;
    return sw_valid_name(ns) && sw_valid_name(colon + 1);
}

void sw_parse_ref(sw_parse *p, const sw_node *n, unsigned kinds, bool group, sw_ref *dst)
{
    if (!sw_node_is_string(n)) {
        sw_parse_error(p, n, "expected a reference (ns:name or name), got %s", sw_node_describe(n));
        return;
    }
    const char *id = sw_qualify(p, n->str);
    if (!sw_valid_id(id)) {
        sw_parse_error(
            p, n, "\"%s\" is not a valid reference (ns:name or name, using letters, digits, _ . -)",
            n->str);
        return;
    }
    dst->id = id;
    dst->node = n;
    dst->target = NULL;
    if (p->n_pending == p->cap_pending) {
        size_t cap = p->cap_pending ? p->cap_pending * 2 : 64;
        sw_pending_ref *v = realloc(p->pending, cap * sizeof *v);
        if (!v) abort();
        p->pending = v;
        p->cap_pending = cap;
    }
    sw_pending_ref *r = &p->pending[p->n_pending++];
    r->ref = dst;
    r->kinds = kinds;
    r->group = group;
    r->entry_id = p->entry_id;
    r->path = sw_arena_strdup(p->arena, p->path);
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int lower_cmp(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int ca = *a >= 'A' && *a <= 'Z' ? *a + 32 : *a, cb = *b >= 'A' && *b <= 'Z' ? *b + 32 : *b;
        if (ca != cb) return ca - cb;
    }
    return *a - *b;
}

const char *sw_suggest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, limit = strlen(word) / 3;
    if (limit < 2) limit = 2;
    for (size_t i = 0; i < n; i++) {
        size_t d = lower_cmp(word, candidates[i]) == 0 ? 0 : edit_distance(word, candidates[i]);
        if (d <= limit && d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

bool sw_read_string(sw_parse *p, const sw_node *n, const char **out)
{
    if (!sw_node_is_string(n)) {
        sw_parse_error(p, n, "expected a string, got %s", sw_node_describe(n));
        return false;
    }
    *out = n->str;
    return true;
}

bool sw_read_strlist(sw_parse *p, const sw_node *n, bool allow_scalar, sw_strlist *out)
{
    if (allow_scalar && sw_node_is_string(n)) {
        out->n = 1;
        out->v = sw_arena_alloc(p->arena, sizeof *out->v);
        out->v[0] = n->str;
        return true;
    }
    if (n->type != SW_NODE_SEQ) {
        sw_parse_error(p, n, "expected %s, got %s",
                       allow_scalar ? "a string or a list of strings" : "a list of strings",
                       sw_node_describe(n));
        return false;
    }
    out->n = n->n;
    out->v = sw_arena_alloc(p->arena, (n->n ? n->n : 1) * sizeof *out->v);
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        size_t saved = sw_path_push_index(p, i);
        ok = sw_read_string(p, n->kids[i], &out->v[i]) && ok;
        sw_path_pop(p, saved);
    }
    if (!ok) out->n = 0; /* callers never see a list with holes */
    return ok;
}

static bool check_bounds(sw_parse *p, const sw_field *f, const sw_node *n, double v)
{
    if (f->min < f->max && (v < f->min || v > f->max)) {
        sw_parse_error(p, n, "%s is out of range (%.15g to %.15g)", n->str, f->min, f->max);
        return false;
    }
    if ((f->flags & SW_F_POSITIVE) && !(v > 0)) {
        sw_parse_error(p, n, "must be greater than 0 (omit the field for the default)");
        return false;
    }
    return true;
}

static void parse_int(sw_parse *p, const sw_field *f, const sw_node *n, int64_t *dst)
{
    if (n->type != SW_NODE_SCALAR || n->scalar != SW_SCALAR_INT) {
        bool fraction = n->type == SW_NODE_SCALAR && n->scalar == SW_SCALAR_FLOAT;
        sw_parse_error(p, n, "expected a whole number, got %s",
                       fraction ? n->str : sw_node_describe(n));
        return;
    }
    if (fabs(n->num) > 9.0e15) {
        sw_parse_error(p, n, "%s is too large", n->str);
        return;
    }
    if (check_bounds(p, f, n, n->num)) *dst = (int64_t)n->num;
}

static void parse_number(sw_parse *p, const sw_field *f, const sw_node *n, double *dst)
{
    if (n->type != SW_NODE_SCALAR || (n->scalar != SW_SCALAR_INT && n->scalar != SW_SCALAR_FLOAT)) {
        sw_parse_error(p, n, "expected a number, got %s", sw_node_describe(n));
        return;
    }
    if (!isfinite(n->num)) {
        sw_parse_error(p, n, "expected a finite number, got %s", n->str);
        return;
    }
    if (check_bounds(p, f, n, n->num)) *dst = n->num;
}

#define DURATION_HINT "use \"250ms\", \"1.5s\", \"2m\", \"1h\" or a number of seconds"
#define SIZE_HINT     "use \"64KB\", \"32MB\", \"1GB\" or a number of bytes"

static void parse_duration(sw_parse *p, const sw_field *f, const sw_node *n, int64_t *dst)
{
    int64_t ns = 0;
    int rc = -1;
    bool infinite =
        (f->flags & SW_F_INFINITE) && sw_node_is_string(n) && !strcmp(n->str, "infinity");
    if (infinite) {
        *dst = SW_DURATION_INFINITE;
        return;
    }
    if (n->type == SW_NODE_SCALAR && (n->scalar == SW_SCALAR_INT || n->scalar == SW_SCALAR_FLOAT))
        rc = sw_duration_from_seconds(n->num, &ns);
    else if (sw_node_is_string(n)) rc = sw_parse_duration(n->str, &ns);
    if (rc != 0) {
        const char *also = f->flags & SW_F_INFINITE ? " (or infinity)" : "";
        if (n->type == SW_NODE_SCALAR)
            sw_parse_error(p, n, "invalid duration \"%s\": %s%s", n->str, DURATION_HINT, also);
        else
            sw_parse_error(p, n, "expected a duration, got %s: %s%s", sw_node_describe(n),
                           DURATION_HINT, also);
        return;
    }
    if ((f->flags & SW_F_POSITIVE) && ns == 0) {
        sw_parse_error(p, n, "must be greater than 0");
        return;
    }
    *dst = ns;
}

static void parse_size(sw_parse *p, const sw_field *f, const sw_node *n, uint64_t *dst)
{
    uint64_t bytes = 0;
    int rc = -1;
    if (n->type == SW_NODE_SCALAR && (n->scalar == SW_SCALAR_INT || n->scalar == SW_SCALAR_FLOAT) &&
        n->num >= 0 && n->num < 1.8e19) {
        bytes = (uint64_t)n->num;
        rc = n->num == floor(n->num) ? 0 : SW_UNITS_FRACTION;
    } else if (sw_node_is_string(n)) {
        rc = sw_parse_size(n->str, &bytes);
    }
    if (rc == SW_UNITS_FRACTION) {
        sw_parse_error(p, n, "invalid size \"%s\": not a whole number of bytes", n->str);
        return;
    }
    if (rc != 0) {
        if (n->type == SW_NODE_SCALAR)
            sw_parse_error(p, n, "invalid size \"%s\": %s", n->str, SIZE_HINT);
        else sw_parse_error(p, n, "expected a size, got %s: %s", sw_node_describe(n), SIZE_HINT);
        return;
    }
    if ((f->flags & SW_F_POSITIVE) && bytes == 0) {
        sw_parse_error(p, n, "must be greater than 0 (omit the field for no limit)");
        return;
    }
    *dst = bytes;
}

static void parse_enum(sw_parse *p, const sw_field *f, const sw_node *n, int *dst)
{
    size_t count = 0;
    while (f->enums[count]) count++;
    if (sw_node_is_string(n)) {
        for (size_t i = 0; i < count; i++) {
            if (strcmp(n->str, f->enums[i]) == 0) {
                *dst = (int)i;
                return;
            }
        }
    }
    char list[256] = "";
    for (size_t i = 0; i < count; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, f->enums[i], sizeof list - strlen(list) - 1);
    }
    const char *hint = sw_node_is_string(n) ? sw_suggest(n->str, f->enums, count) : NULL;
    if (hint)
        sw_parse_error(p, n, "unknown value \"%s\" (did you mean \"%s\"?); expected one of: %s",
                       n->str, hint, list);
    else
        sw_parse_error(p, n, "unknown value %s%s%s; expected one of: %s",
                       n->type == SW_NODE_SCALAR ? "\"" : "",
                       n->type == SW_NODE_SCALAR ? n->str : sw_node_describe(n),
                       n->type == SW_NODE_SCALAR ? "\"" : "", list);
}

static void parse_reflist(sw_parse *p, const sw_field *f, const sw_node *n, sw_reflist *dst)
{
    bool group = f->flags & SW_F_GROUPREF;
    if (sw_node_is_string(n)) {
        dst->n = 1;
        dst->v = sw_arena_alloc(p->arena, sizeof *dst->v);
        sw_parse_ref(p, n, f->kinds, group, &dst->v[0]);
        return;
    }
    if (n->type != SW_NODE_SEQ) {
        sw_parse_error(p, n, "expected a list of references, got %s", sw_node_describe(n));
        return;
    }
    if (n->n == 0 && (f->flags & SW_F_NONEMPTY)) {
        sw_parse_error(p, n, "must not be empty");
        return;
    }
    dst->n = n->n;
    dst->v = sw_arena_alloc(p->arena, (n->n ? n->n : 1) * sizeof *dst->v);
    for (size_t i = 0; i < n->n; i++) {
        size_t saved = sw_path_push_index(p, i);
        sw_parse_ref(p, n->kids[i], f->kinds, group, &dst->v[i]);
        sw_path_pop(p, saved);
    }
}

static void parse_field(sw_parse *p, const sw_field *f, const sw_node *n, char *base)
{
    void *dst = base + f->offset;
    switch (f->type) {
    case SW_F_STRING: sw_read_string(p, n, (const char **)dst); break;
    case SW_F_BOOL:
        if (n->type == SW_NODE_SCALAR && n->scalar == SW_SCALAR_BOOL) *(bool *)dst = n->num != 0;
        else sw_parse_error(p, n, "expected true or false, got %s", sw_node_describe(n));
        break;
    case SW_F_INT: parse_int(p, f, n, dst); break;
    case SW_F_NUMBER: parse_number(p, f, n, dst); break;
    case SW_F_DURATION: parse_duration(p, f, n, dst); break;
    case SW_F_SIZE: parse_size(p, f, n, dst); break;
    case SW_F_ENUM: parse_enum(p, f, n, dst); break;
    case SW_F_REF: sw_parse_ref(p, n, f->kinds, false, dst); break;
    case SW_F_REFLIST: parse_reflist(p, f, n, dst); break;
    case SW_F_ANY: *(const sw_node **)dst = n; break;
    case SW_F_LIST:
        if (n->type == SW_NODE_SEQ) *(const sw_node **)dst = n;
        else sw_parse_error(p, n, "expected a list, got %s", sw_node_describe(n));
        break;
    case SW_F_MAP:
        if (n->type == SW_NODE_MAP) *(const sw_node **)dst = n;
        else sw_parse_error(p, n, "expected a mapping, got %s", sw_node_describe(n));
        break;
    case SW_F_OBJECT:
        if (n->type == SW_NODE_MAP) sw_schema_parse(p, f->sub, n, dst, NULL);
        else if (!(n->type == SW_NODE_SCALAR && n->scalar == SW_SCALAR_NULL))
            sw_parse_error(p, n, "expected a mapping, got %s", sw_node_describe(n));
        break;
    case SW_F_CUSTOM: f->custom(p, n, dst); break;
    }
}

static bool in_list(const char *s, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(s, *list) == 0) return true;
    return false;
}

static void unknown_field(sw_parse *p, const sw_schema *schema, const sw_node *key)
{
    const char *names[64];
    size_t n = schema->n < 64 ? schema->n : 64;
    for (size_t i = 0; i < n; i++) names[i] = schema->fields[i].name;
    const char *hint = sw_suggest(key->str, names, n);
    size_t saved = sw_path_push(p, key->str);
    if (hint) sw_parse_error(p, key, "unknown field (did you mean \"%s\"?)", hint);
    else sw_parse_error(p, key, "unknown field");
    sw_path_pop(p, saved);
}

void sw_schema_parse(sw_parse *p, const sw_schema *schema, const sw_node *map, void *dst,
                     const char *const *skip)
{
    const sw_field *seen_at_offset[64] = {0};
    for (size_t i = 0; i < map->n; i++) {
        const sw_node *key = sw_node_key(map, i);
        if (in_list(key->str, skip)) continue;
        size_t fi = 0;
        while (fi < schema->n && strcmp(schema->fields[fi].name, key->str) != 0) fi++;
        if (fi == schema->n) {
            unknown_field(p, schema, key);
            continue;
        }
        const sw_field *f = &schema->fields[fi];
        /* Two names for one field (depends_on / requires): refuse both at once. */
        for (size_t j = 0; j < schema->n && j < 64; j++) {
            const sw_field *o = seen_at_offset[j];
            if (o && o != f && o->offset == f->offset && o->type == f->type &&
                f->type != SW_F_OBJECT) {
                size_t saved = sw_path_push(p, key->str);
                sw_parse_error(p, key, "\"%s\" and \"%s\" are the same field: give one", key->str,
                               seen_at_offset[j]->name);
                sw_path_pop(p, saved);
            }
        }
        if (fi < 64) seen_at_offset[fi] = f;
        size_t saved = sw_path_push(p, key->str);
        parse_field(p, f, sw_node_val(map, i), dst);
        sw_path_pop(p, saved);
    }
    for (size_t fi = 0; fi < schema->n; fi++) {
        const sw_field *f = &schema->fields[fi];
        if (!(f->flags & SW_F_REQUIRED) || sw_node_get(map, f->name)) continue;
        size_t saved = sw_path_push(p, f->name);
        sw_parse_error(p, map, "required field is missing");
        sw_path_pop(p, saved);
    }
}
