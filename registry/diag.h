/* Diagnostics: the list of load errors, each naming file:line:column, the entry id and the
 * field path. Loaders append; the CLI sorts, removes repeats and prints. Owns copies of all
 * strings it is given. */
#ifndef STEWARD_DIAG_H
#define STEWARD_DIAG_H

#include <stddef.h>
#include <stdio.h>

typedef struct sw_diag {
    char *file;         /* may be NULL for errors that concern no file */
    unsigned line, col; /* 1-based; line 0: the error concerns the whole file or directory */
    char *entry;        /* entry id, or NULL */
    char *field;        /* field path such as lifecycle.restart.max_delay, or NULL */
    char *msg;
} sw_diag;

typedef struct sw_diags {
    sw_diag *v;
    size_t n, cap;
} sw_diags;

void sw_diags_init(sw_diags *d);
void sw_diags_free(sw_diags *d);
void sw_diags_add(sw_diags *d, const char *file, unsigned line, unsigned col, const char *entry,
                  const char *field, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Sorts by file, line, column and text, and drops exact repeats: each error is shown once. */
void sw_diags_finish(sw_diags *d);
/* "file:line:col: entry ID field F: message" ("file: message" when line is 0) into buf
 * (truncated to size). */
void sw_diag_format(const sw_diag *e, char *buf, size_t size);
void sw_diags_print(const sw_diags *d, FILE *out);

#endif
