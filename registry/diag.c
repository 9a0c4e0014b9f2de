/* Diagnostics list: append, sort, de-duplicate, format. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sw_diags_init(sw_diags *d)
{
    d->v = NULL;
    d->n = d->cap = 0;
}

void sw_diags_free(sw_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].entry);
        free(d->v[i].field);
        free(d->v[i].msg);
    }
    free(d->v);
    sw_diags_init(d);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void sw_diags_add(sw_diags *d, const char *file, unsigned line, unsigned col, const char *entry,
                  const char *field, const char *fmt, ...)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        sw_diag *v = realloc(d->v, cap * sizeof *v);
        if (!v) return; /* out of memory: dropping a diagnostic beats crashing the check */
        d->v = v;
        d->cap = cap;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sw_diag *e = &d->v[d->n++];
    e->file = dup_or_null(file);
    e->line = line;
    e->col = col;
    e->entry = dup_or_null(entry);
    e->field = dup_or_null(field && *field ? field : NULL);
    e->msg = strdup(msg);
}

static int strcmp_null(const char *a, const char *b)
{
    if (!a || !b) return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int diag_cmp(const void *pa, const void *pb)
{
    const sw_diag *a = pa, *b = pb;
    int c = strcmp_null(a->file, b->file);
    if (c) return c;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->col != b->col) return a->col < b->col ? -1 : 1;
    if ((c = strcmp_null(a->entry, b->entry))) return c;
    if ((c = strcmp_null(a->field, b->field))) return c;
    return strcmp(a->msg, b->msg);
}

void sw_diags_finish(sw_diags *d)
{
    if (d->n < 2) return;
    qsort(d->v, d->n, sizeof *d->v, diag_cmp);
    size_t out = 1;
    for (size_t i = 1; i < d->n; i++) {
        if (diag_cmp(&d->v[out - 1], &d->v[i]) == 0) {
            free(d->v[i].file);
            free(d->v[i].entry);
            free(d->v[i].field);
            free(d->v[i].msg);
        } else {
            d->v[out++] = d->v[i];
        }
    }
    d->n = out;
}

void sw_diag_format(const sw_diag *e, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
#define PUT(...)                                                             \
    do {                                                                     \
        if (n < size) n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__); \
    } while (0)
    if (e->file && e->line) PUT("%s:%u:%u: ", e->file, e->line, e->col);
    else if (e->file) PUT("%s: ", e->file); /* about the file or directory as a whole */
    if (e->entry) PUT("entry %s ", e->entry);
    if (e->field) PUT("field %s", e->field);
    if (e->entry || e->field) {
        if (n > 0 && n < size && buf[n - 1] == ' ') n--;
        PUT(": ");
    }
    PUT("%s", e->msg);
#undef PUT
}

void sw_diags_print(const sw_diags *d, FILE *out)
{
    char buf[2048];
    for (size_t i = 0; i < d->n; i++) {
        sw_diag_format(&d->v[i], buf, sizeof buf);
        fprintf(out, "%s\n", buf);
    }
}
