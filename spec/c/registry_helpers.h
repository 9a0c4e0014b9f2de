/* Shared helpers for the registry unit tests (test_schema, test_refs, test_graph): load a
 * registry from YAML text held in memory and look at its diagnostics. Header-only so that each
 * test stays one translation unit; include after <cmocka.h>. */
#ifndef SPEC_REGISTRY_HELPERS_H
#define SPEC_REGISTRY_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define T_ROOT "/tmp/x"
#define T_FILE "/tmp/x/app.yaml"

/* Loads n files given as path/text pairs under root T_ROOT. */
static inline sw_registry *t_load_files(const char *const *paths, const char *const *texts,
                                        size_t n, sw_diags *d)
{
    sw_registry_file files[16];
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        files[i].path = paths[i];
        files[i].text = texts[i];
        files[i].len = strlen(texts[i]);
    }
    sw_diags_init(d);
    return sw_registry_load_files(T_ROOT, files, n, d);
}

static inline sw_registry *t_load(const char *yaml, sw_diags *d)
{
    const char *path = T_FILE;
    return t_load_files(&path, &yaml, 1, d);
}

static inline void t_print_diags(const sw_diags *d)
{
    char buf[2048];
    for (size_t i = 0; i < d->n; i++) {
        sw_diag_format(&d->v[i], buf, sizeof buf);
        print_message("  diag: %s\n", buf);
    }
}

/* Loads yaml, which must be valid: fails the test with every diagnostic otherwise. */
static inline sw_registry *t_must_load(const char *yaml)
{
    sw_diags d;
    sw_registry *r = t_load(yaml, &d);
    if (!r) {
        sw_diags_finish(&d);
        t_print_diags(&d);
        sw_diags_free(&d);
        fail_msg("registry expected to load");
    }
    assert_int_equal(d.n, 0);
    sw_diags_free(&d);
    return r;
}

/* Loads yaml, which must be refused; d is left sorted (sw_diags_finish) for the caller. */
static inline void t_must_fail(const char *yaml, sw_diags *d)
{
    sw_registry *r = t_load(yaml, d);
    if (r) {
        sw_registry_free(r);
        sw_diags_free(d);
        fail_msg("registry expected to be refused");
    }
    sw_diags_finish(d);
    assert_true(d->n > 0);
}

/* The first diagnostic whose message contains `needle`, or NULL. */
static inline const sw_diag *t_find_diag(const sw_diags *d, const char *needle)
{
    for (size_t i = 0; i < d->n; i++)
        if (strstr(d->v[i].msg, needle)) return &d->v[i];
    return NULL;
}

static inline size_t t_count_diags(const sw_diags *d, const char *needle)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (strstr(d->v[i].msg, needle)) n++;
    return n;
}

/* Like t_find_diag, but fails the test (printing every diagnostic) when there is none. */
static inline const sw_diag *t_need_diag(const sw_diags *d, const char *needle)
{
    const sw_diag *e = t_find_diag(d, needle);
    if (!e) {
        t_print_diags(d);
        fail_msg("no diagnostic contains \"%s\"", needle);
    }
    return e;
}

/* The first diagnostic for entry (NULL: any) and exactly this field; fails the test when none.
 * Finding errors by where they are keeps tests independent of the exact wording. */
static inline const sw_diag *t_need_field(const sw_diags *d, const char *entry, const char *field)
{
    for (size_t i = 0; i < d->n; i++) {
        const sw_diag *e = &d->v[i];
        if (entry && (!e->entry || strcmp(e->entry, entry) != 0)) continue;
        if (e->field && strcmp(e->field, field) == 0) return e;
    }
    t_print_diags(d);
    fail_msg("no diagnostic for entry %s field %s", entry ? entry : "(any)", field);
    return NULL;
}

/* Like t_need_field, but the field may go deeper than `field` ("policy.conditions[3]" matches
 * "policy.conditions[3].value", not "policy.conditions[30]"). */
static inline const sw_diag *t_need_under(const sw_diags *d, const char *entry, const char *field)
{
    size_t len = strlen(field);
    for (size_t i = 0; i < d->n; i++) {
        const sw_diag *e = &d->v[i];
        if (entry && (!e->entry || strcmp(e->entry, entry) != 0)) continue;
        if (!e->field || strncmp(e->field, field, len) != 0) continue;
        char next = e->field[len];
        if (next == 0 || next == '.' || next == '[') return e;
    }
    t_print_diags(d);
    fail_msg("no diagnostic for entry %s under field %s", entry ? entry : "(any)", field);
    return NULL;
}

/* Asserts that diagnostic e's message contains needle. */
static inline void t_msg_has(const sw_diag *e, const char *needle)
{
    if (!strstr(e->msg, needle)) fail_msg("message \"%s\" lacks \"%s\"", e->msg, needle);
}

static inline const sw_entry *t_get(const sw_registry *r, const char *id)
{
    const sw_entry *e = sw_registry_get(r, id);
    if (!e) fail_msg("no entry %s", id);
    return e;
}

#endif
