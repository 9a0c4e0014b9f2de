/* Loading a snapshot: find the files, parse each file's header and entries, then the checks
 * that need every entry (references, groups, the dependency graph). Every error is collected;
 * a snapshot with any error is freed and NULL returned. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kinds.h"
#include "loader_internal.h"
#include "readfile.h"
#include "registry.h"
#include "schema.h"

#define MAX_FILE_BYTES (64u * 1024 * 1024)

/* ---- finding files ---- */

typedef struct pathlist {
    char **v;
    size_t n, cap;
} pathlist;

static void pathlist_add(pathlist *l, const char *p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) abort();
    }
    l->v[l->n++] = strdup(p);
}

static bool has_yaml_ext(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

/* Symlinked directories are not followed, so a link loop cannot trap the walk. Anything else
 * named *.yaml or *.yml is listed, regular or not: read_whole refuses what is not a file. */
static void walk(const char *dir, pathlist *out, sw_diags *diags, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        sw_diags_add(diags, dir, 0, 0, NULL, NULL, "cannot read directory: %s", strerror(errno));
        return;
    }
    size_t dlen = strlen(dir);
    const char *sep = dlen && dir[dlen - 1] == '/' ? "" : "/"; /* "app/" names files "app/x.yaml" */
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s%s%s", dir, sep, de->d_name);
        struct stat st, lst;
        if (lstat(path, &lst) != 0 || stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (!S_ISLNK(lst.st_mode) && depth < 32) walk(path, out, diags, depth + 1);
        } else if (has_yaml_ext(de->d_name)) {
            pathlist_add(out, path);
        }
    }
    closedir(d);
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A FIFO or device named *.yaml is listed too, and refused here without blocking. */
static char *read_whole(const char *path, size_t *len, sw_diags *diags)
{
    const char *why = NULL;
    char *buf = sw_read_regular_file(path, MAX_FILE_BYTES, "larger than 64MB", false, len, &why);
    if (!buf) sw_diags_add(diags, path, 0, 0, NULL, NULL, "cannot read: %s", why);
    return buf;
}

/* ---- one file ---- */

static const char *const file_keys[] = {"version", "namespace", "meta", "entries"};

static void add_entry(loader *L, sw_entry *e)
{
    sw_registry *r = L->r;
    if (r->n_entries == L->cap_entries) {
        L->cap_entries = L->cap_entries ? L->cap_entries * 2 : 256;
        r->entries = realloc(r->entries, L->cap_entries * sizeof *r->entries);
        if (!r->entries) abort();
    }
    e->index = r->n_entries;
    r->entries[r->n_entries++] = e;
}

static const sw_node *merge_meta(sw_arena *a, const sw_node *file_meta, const sw_node *own)
{
    if (!file_meta || file_meta->n == 0) return own;
    if (!own) return file_meta;
    sw_node *m = sw_arena_alloc(a, sizeof *m);
    *m = *own;
    m->kids = sw_arena_alloc(a, 2 * (file_meta->n + own->n) * sizeof *m->kids);
    m->n = 0;
    for (size_t i = 0; i < file_meta->n; i++) {
        if (sw_node_get(own, sw_node_key(file_meta, i)->str)) continue;
        m->kids[2 * m->n] = sw_node_key(file_meta, i);
        m->kids[2 * m->n + 1] = sw_node_val(file_meta, i);
        m->n++;
    }
    for (size_t i = 0; i < own->n; i++) {
        m->kids[2 * m->n] = sw_node_key(own, i);
        m->kids[2 * m->n + 1] = sw_node_val(own, i);
        m->n++;
    }
    return m;
}

void sw_loader_error_at(loader *L, const char *file, const sw_node *n, const char *entry,
                        const char *field, const char *msg)
{
    sw_diags_add(L->diags, file, n ? n->line : 1, n ? n->col : 1, entry, field, "%s", msg);
    L->failed = true;
}

/* name and kind: returns false if the entry cannot be parsed further; *name is set whenever the
 * name is valid. `where` is "entries[i]", the field path used while there is no entry id. */
static bool entry_identity(loader *L, const sw_node *item, const char *ns, const char *where,
                           const char **name, const sw_kind_def **def)
{
    const char *file = L->parse.file;
    const sw_node *nn = sw_node_get(item, "name"), *kn = sw_node_get(item, "kind");
    char field[48];
    snprintf(field, sizeof field, "%s.name", where);
    bool ok = true;
    if (!nn) {
        sw_loader_error_at(L, file, item, NULL, field, "required field is missing");
        ok = false;
    } else if (!sw_node_is_string(nn) || !sw_valid_name(nn->str)) {
        sw_loader_error_at(L, file, nn, NULL, field,
                           "must be a name of letters, digits, _ . - (no colon)");
        ok = false;
    }
    *name = ok ? nn->str : NULL;
    char *id = ok ? sw_arena_printf(&L->r->arena, "%s:%s", ns, nn->str) : NULL;
    if (!kn) {
        sw_loader_error_at(L, file, item, id, "kind", "required field is missing");
        return false;
    }
    if (!sw_node_is_string(kn) || !(*def = sw_kind_lookup(kn->str))) {
        const char *hint =
            sw_node_is_string(kn) ? sw_suggest(kn->str, sw_kind_names, SW_KIND__COUNT) : NULL;
        char msg[256];
        snprintf(msg, sizeof msg, "unknown kind \"%s\"%s%s%s",
                 sw_node_is_string(kn) ? kn->str : sw_node_describe(kn),
                 hint ? " (did you mean \"" : "", hint ? hint : "", hint ? "\"?)" : "");
        sw_loader_error_at(L, file, kn, id, "kind", msg);
        return false;
    }
    return ok;
}

static void load_entry(loader *L, const sw_node *item, const char *ns, const sw_node *file_meta,
                       size_t index)
{
    sw_parse *p = &L->parse;
    char field[32];
    snprintf(field, sizeof field, "entries[%zu]", index);
    if (item->type != SW_NODE_MAP) {
        sw_loader_error_at(L, p->file, item, NULL, field,
                           "an entry must be a mapping with name and kind");
        return;
    }
    const char *name = NULL;
    const sw_kind_def *def = NULL;
    if (!entry_identity(L, item, ns, field, &name, &def)) {
        /* Without a kind the entry cannot be parsed, but its id still exists: references to it
         * are not reported again as naming no entry (a placeholder of kind SW_KIND__COUNT). */
        if (name) {
            sw_entry *e = sw_arena_alloc(&L->r->arena, sizeof *e);
            e->id = sw_arena_printf(&L->r->arena, "%s:%s", ns, name);
            e->kind = SW_KIND__COUNT;
            e->file = p->file;
            e->line = item->line;
            e->col = item->col;
            sw_strmap_put(&L->r->ids, e->id, e);
        }
        return;
    }
    sw_entry *e = sw_arena_alloc(&L->r->arena, sizeof *e);
    e->id = sw_arena_printf(&L->r->arena, "%s:%s", ns, name);
    e->ns = ns;
    e->name = name;
    e->kind = def->kind;
    e->node = item;
    e->file = p->file;
    e->dir = p->dir;
    e->line = item->line;
    e->col = item->col;
    const sw_node *meta = sw_node_get(item, "meta");
    if (meta && meta->type != SW_NODE_MAP) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected a mapping, got %s", sw_node_describe(meta));
        sw_loader_error_at(L, p->file, meta, e->id, "meta", msg);
        meta = NULL;
    }
    e->meta = merge_meta(&L->r->arena, file_meta, meta);
    sw_entry *first = sw_strmap_put(&L->r->ids, e->id, e);
    if (first) {
        char msg[512];
        snprintf(msg, sizeof msg, "duplicate id %s (first defined at %s:%u:%u)", e->id, first->file,
                 first->line, first->col);
        sw_loader_error_at(L, p->file, sw_node_get(item, "name"), e->id, "name", msg);
        return;
    }
    p->entry_id = e->id;
    p->ns = ns;
    p->ok = true;
    p->path_len = 0;
    p->path[0] = 0;
    sw_kind_parse(p, def, e);
    if (!p->ok) L->failed = true;
    add_entry(L, e);
}

static void unknown_file_key(loader *L, const sw_node *key)
{
    const char *hint = sw_suggest(key->str, file_keys, 4);
    char msg[200];
    snprintf(msg, sizeof msg, "unknown field%s%s%s", hint ? " (did you mean \"" : "",
             hint ? hint : "", hint ? "\"?)" : "");
    sw_loader_error_at(L, L->parse.file, key, NULL, key->str, msg);
}

/* version, namespace, meta, entries. Returns the namespace or NULL. */
static const char *file_header(loader *L, const sw_node *root)
{
    const char *file = L->parse.file;
    for (size_t i = 0; i < root->n; i++) {
        const sw_node *k = sw_node_key(root, i);
        bool known = false;
        for (size_t j = 0; j < 4; j++) known |= strcmp(k->str, file_keys[j]) == 0;
        if (!known) unknown_file_key(L, k);
    }
    const sw_node *v = sw_node_get(root, "version");
    if (v &&
        !(v->type == SW_NODE_SCALAR && (strcmp(v->str, "1.0") == 0 || strcmp(v->str, "1") == 0)))
        sw_loader_error_at(L, file, v, NULL, "version",
                           "unsupported version (this host reads \"1.0\")");
    const sw_node *meta = sw_node_get(root, "meta");
    if (meta && meta->type != SW_NODE_MAP) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected a mapping, got %s", sw_node_describe(meta));
        sw_loader_error_at(L, file, meta, NULL, "meta", msg);
    }
    const sw_node *ns = sw_node_get(root, "namespace");
    if (!ns) {
        sw_loader_error_at(L, file, root, NULL, "namespace",
                           "required field is missing: every file names its namespace");
        return NULL;
    }
    if (!sw_node_is_string(ns) || !sw_valid_name(ns->str)) {
        sw_loader_error_at(L, file, ns, NULL, "namespace",
                           "must be a name of letters, digits, _ . - (no colon)");
        return NULL;
    }
    return ns->str;
}

/* Header and entries of one parsed file (file: arena-owned; root NULL if it did not parse). */
static void load_root(loader *L, const char *file, const sw_node *root)
{
    sw_arena *a = &L->r->arena;
    const char *slash = strrchr(file, '/');
    L->parse.file = file;
    L->parse.dir = slash ? sw_arena_strndup(a, file, (size_t)(slash - file)) : ".";
    L->r->n_files++;
    if (!root) {
        L->failed = true;
        return;
    }
    if (root->type != SW_NODE_MAP) {
        sw_loader_error_at(L, file, root, NULL, NULL,
                           "expected a mapping with namespace and entries at the top of the file");
        return;
    }
    const char *ns = file_header(L, root);
    const sw_node *entries = sw_node_get(root, "entries");
    if (!entries) {
        sw_loader_error_at(L, file, root, NULL, "entries", "required field is missing");
        return;
    }
    if (entries->type != SW_NODE_SEQ) {
        if (!(entries->type == SW_NODE_SCALAR && entries->scalar == SW_SCALAR_NULL))
            sw_loader_error_at(L, file, entries, NULL, "entries", "expected a list of entries");
        return;
    }
    if (!ns) return;
    const sw_node *meta = sw_node_get(root, "meta");
    if (meta && meta->type != SW_NODE_MAP) meta = NULL;
    for (size_t i = 0; i < entries->n; i++) load_entry(L, entries->kids[i], ns, meta, i);
}

/* ---- parsing files in parallel ----
 * Reading and YAML-parsing files is most of a load and each file stands alone, so a few
 * threads parse them, each file into its own arena and diagnostics; the entries are then
 * taken in sorted path order on the calling thread, so results never depend on timing. */

typedef struct parsed_file {
    const char *path; /* in the snapshot's arena */
    const char *text; /* given in memory, or NULL: read from path */
    size_t len;
    sw_arena arena;
    sw_diags diags;
    const sw_node *root;
} parsed_file;

typedef struct parse_pool {
    parsed_file *files;
    size_t n;
    atomic_size_t next;
} parse_pool;

static void parse_one(parsed_file *f)
{
    sw_arena_init(&f->arena);
    sw_diags_init(&f->diags);
    size_t len = f->len;
    char *owned = f->text ? NULL : read_whole(f->path, &len, &f->diags);
    const char *text = f->text ? f->text : owned;
    if (text) f->root = sw_yaml_parse(&f->arena, f->path, text, len, &f->diags);
    free(owned);
}

static void *parse_worker(void *arg)
{
    parse_pool *pool = arg;
    for (size_t i; (i = atomic_fetch_add(&pool->next, 1)) < pool->n;) parse_one(&pool->files[i]);
    return NULL;
}

static void parse_all(parsed_file *files, size_t n)
{
    parse_pool pool = {files, n, 0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = n < 8 ? 0 : (size_t)(cores > 4 ? 4 : cores > 1 ? cores - 1 : 0);
    pthread_t tid[4];
    size_t started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, parse_worker, &pool) != 0) break;
    parse_worker(&pool); /* the calling thread parses too */
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
}

static void load_parsed(loader *L, parsed_file *files, size_t n)
{
    parse_all(files, n);
    for (size_t i = 0; i < n; i++) {
        parsed_file *f = &files[i];
        for (size_t k = 0; k < f->diags.n; k++) {
            const sw_diag *d = &f->diags.v[k];
            sw_diags_add(L->diags, d->file, d->line, d->col, d->entry, d->field, "%s", d->msg);
        }
        sw_diags_free(&f->diags);
        sw_arena_adopt(&L->r->arena, &f->arena);
        load_root(L, f->path, f->root);
    }
}

static void finish(loader *L)
{
    sw_loader_resolve_refs(L);
    sw_loader_check_groups(L);
    sw_loader_check_liveness(L);
    sw_loader_index_env(L);
    /* The graph is built even after other errors (unresolved references are left out), so a
     * cycle is reported together with everything else. */
    sw_registry *r = L->r;
    if (sw_graph_build(&r->graph, &r->arena, (const sw_entry *const *)r->entries, r->n_entries,
                       &r->ids, L->diags) != 0)
        L->failed = true;
    r->n_services = r->graph.n;
}

/* ---- public ---- */

static sw_registry *registry_new(const char *root)
{
    sw_registry *r = calloc(1, sizeof *r);
    if (!r) abort();
    sw_arena_init(&r->arena);
    sw_strmap_init(&r->ids);
    sw_strmap_init(&r->env);
    atomic_init(&r->refs, 1);
    r->root = sw_arena_strdup(&r->arena, root);
    return r;
}

static void loader_init(loader *L, sw_registry *r, sw_diags *diags, const char *root)
{
    memset(L, 0, sizeof *L);
    L->r = r;
    L->diags = diags;
    L->parse.arena = &r->arena;
    L->parse.diags = diags;
    char real[PATH_MAX];
    L->parse.app_root = realpath(root, real) ? sw_arena_strdup(&r->arena, real) : NULL;
}

static sw_registry *loader_done(loader *L)
{
    finish(L);
    free(L->parse.pending);
    if (!L->failed) return L->r;
    sw_registry_free(L->r);
    return NULL;
}

sw_registry *sw_registry_load_files(const char *root, const sw_registry_file *files, size_t n,
                                    sw_diags *diags)
{
    loader L;
    loader_init(&L, registry_new(root), diags, root);
    parsed_file *parsed = calloc(n ? n : 1, sizeof *parsed);
    if (!parsed) abort();
    for (size_t i = 0; i < n; i++)
        parsed[i] = (parsed_file){.path = sw_arena_strdup(&L.r->arena, files[i].path),
                                  .text = files[i].text,
                                  .len = files[i].len};
    load_parsed(&L, parsed, n);
    free(parsed);
    return loader_done(&L);
}

sw_registry *sw_registry_load_dir(const char *dir, sw_diags *diags)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        sw_diags_add(diags, dir, 0, 0, NULL, NULL, "cannot read the app directory: %s",
                     strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        sw_diags_add(diags, dir, 0, 0, NULL, NULL, "not a directory");
        return NULL;
    }
    pathlist files = {0};
    size_t before = diags->n;
    walk(dir, &files, diags, 0);
    if (files.n)
        qsort(files.v, files.n, sizeof *files.v, path_cmp); /* files.v is NULL when empty */
    loader L;
    loader_init(&L, registry_new(dir), diags, dir);
    L.failed = diags->n > before;
    if (files.n == 0)
        sw_diags_add(diags, dir, 0, 0, NULL, NULL, "no *.yaml or *.yml files found"),
            L.failed = true;
    parsed_file *parsed = calloc(files.n ? files.n : 1, sizeof *parsed);
    if (!parsed) abort();
    for (size_t i = 0; i < files.n; i++) {
        parsed[i].path = sw_arena_strdup(&L.r->arena, files.v[i]);
        free(files.v[i]);
    }
    load_parsed(&L, parsed, files.n);
    free(parsed);
    free(files.v);
    return loader_done(&L);
}

const sw_registry *sw_registry_retain(const sw_registry *r)
{
    if (r) atomic_fetch_add_explicit(&((sw_registry *)r)->refs, 1, memory_order_relaxed);
    return r;
}

void sw_registry_free(const sw_registry *cr)
{
    sw_registry *r = (sw_registry *)cr; /* const for readers; the last reference owns it */
    if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
    sw_strmap_free(&r->ids);
    sw_strmap_free(&r->env);
    free(r->entries);
    sw_arena_free(&r->arena);
    free(r);
}

const sw_entry *sw_registry_get(const sw_registry *r, const char *id)
{
    return sw_strmap_get(&r->ids, id);
}
