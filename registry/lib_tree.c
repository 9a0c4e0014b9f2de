/* Reading a library.lua's module tree: every *.lua file under a directory, read once at
 * registry load and kept as text in the snapshot's arena, so a process never touches the file
 * system to require. Bounded in files, depth and bytes; a symlink is followed only to a
 * regular file inside the tree, and names that could climb out (.., hidden) are skipped. */
#include "lib_tree.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "readfile.h"

#define MAX_FILE_BYTES (16u * 1024 * 1024)

typedef struct walk {
    sw_parse *p;
    const sw_node *n;
    const char *real_root; /* realpath of the directory */
    const char *shown;     /* the directory as chunk names show it */
    sw_tree_file *files;
    size_t n_files, cap;
    size_t bytes;
    bool failed;
} walk;

static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    return strncmp(root, path, n) == 0 && path[n] == '/';
}

static void fail(walk *w, const char *fmt, const char *a, const char *b)
{
    if (!w->failed) sw_parse_error(w->p, w->n, fmt, a, b);
    w->failed = true;
}

/* a + sep + b into buf (PATH_MAX); false if it does not fit. */
static bool join(char *buf, const char *a, const char *sep, const char *b)
{
    int n = snprintf(buf, PATH_MAX, "%s%s%s", a, sep, b);
    return n >= 0 && n < PATH_MAX;
}

static bool ends_with_lua(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".lua") == 0;
}

static void add_file(walk *w, const char *rel, const char *real)
{
    if (w->n_files == SW_TREE_MAX_FILES) {
        fail(w, "dir://%s: more than 1000 Lua files%s", w->shown, "");
        return;
    }
    const char *why = NULL;
    size_t len = 0;
    char *text = sw_read_regular_file(real, MAX_FILE_BYTES, "larger than 16MB", true, &len, &why);
    if (!text) {
        fail(w, "dir://%s: %s", rel, why);
        return;
    }
    if ((w->bytes += len) > SW_TREE_MAX_BYTES) {
        free(text);
        fail(w, "dir://%s: more than 64MB of Lua files%s", w->shown, "");
        return;
    }
    if (w->n_files == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        sw_tree_file *v = realloc(w->files, cap * sizeof *v);
        if (!v) abort();
        w->files = v;
        w->cap = cap;
    }
    char shown[PATH_MAX];
    if (!join(shown, w->shown, "/", rel)) shown[0] = 0;
    sw_arena *a = w->p->arena;
    w->files[w->n_files++] = (sw_tree_file){sw_arena_strdup(a, rel), sw_arena_strdup(a, shown),
                                            sw_arena_strndup(a, text, len), len};
    free(text);
}

static void walk_dir(walk *w, const char *rel, int depth);

/* One directory entry: a subdirectory is walked, a *.lua file (or a symlink to a regular file
 * inside the tree) is read; anything else is skipped. */
static void visit(walk *w, const char *rel, const char *name, int depth)
{
    char sub[PATH_MAX], full[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!join(sub, rel, *rel ? "/" : "", name) || !join(full, w->real_root, "/", sub) ||
        lstat(full, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        walk_dir(w, sub, depth + 1);
        return;
    }
    if (!ends_with_lua(name) || strchr(name, '.') != name + strlen(name) - 4) return;
    if (S_ISLNK(st.st_mode)) {
        if (!realpath(full, real) || !inside(w->real_root, real)) {
            fail(w, "dir://%s/%s: a symlink that leaves the tree", w->shown, sub);
            return;
        }
        if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) return;
        add_file(w, sub, real);
        return;
    }
    if (S_ISREG(st.st_mode)) add_file(w, sub, full);
}

static void walk_dir(walk *w, const char *rel, int depth)
{
    if (depth > SW_TREE_MAX_DEPTH) {
        fail(w, "dir://%s: directories nested deeper than 16 levels (at %s)", w->shown, rel);
        return;
    }
    char full[PATH_MAX];
    DIR *d = join(full, w->real_root, *rel ? "/" : "", rel) ? opendir(full) : NULL;
    if (!d) {
        fail(w, "dir://%s: %s", rel, strerror(errno));
        return;
    }
    struct dirent *de;
    while (!w->failed && (de = readdir(d)))
        if (de->d_name[0] != '.') visit(w, rel, de->d_name, depth);
    closedir(d);
}

static int by_rel(const void *a, const void *b)
{
    return strcmp(((const sw_tree_file *)a)->rel, ((const sw_tree_file *)b)->rel);
}

/* The root module: DIR.lua beside the directory (Lua's "?.lua" comes before "?/init.lua"),
 * else DIR/init.lua. */
static void set_root(walk *w, const char *real_root, sw_source *src, const sw_lib_tree *t)
{
    char beside[PATH_MAX], shown[PATH_MAX];
    struct stat st;
    if (join(beside, real_root, "", ".lua") && join(shown, w->shown, "", ".lua") &&
        lstat(beside, &st) == 0 && S_ISREG(st.st_mode)) {
        const char *why = NULL;
        size_t len = 0;
        char *text =
            sw_read_regular_file(beside, MAX_FILE_BYTES, "larger than 16MB", true, &len, &why);
        if (!text) {
            fail(w, "dir://%s.lua: %s", w->shown, why);
            return;
        }
        src->path = sw_arena_strdup(w->p->arena, shown);
        src->text = sw_arena_strndup(w->p->arena, text, len);
        src->len = len;
        free(text);
        return;
    }
    const sw_tree_file *init = sw_lib_tree_find(t, "");
    if (init) {
        src->path = init->path;
        src->text = init->text;
        src->len = init->len;
    }
}

/* Resolves the directory named after dir:// : relative ones against the YAML file's directory
 * and kept inside the app; absolute ones as named. *shown gets the form chunk names use. */
static bool resolve_dir(sw_parse *p, const sw_node *n, const char *name, char *shown, char *real)
{
    if (!*name) {
        sw_parse_error(p, n, "dir:// needs a directory");
        return false;
    }
    if (name[0] == '/') snprintf(shown, PATH_MAX, "%s", name);
    else snprintf(shown, PATH_MAX, "%s/%s", p->dir, name);
    size_t len = strlen(shown);
    while (len > 1 && shown[len - 1] == '/') shown[--len] = 0;
    if (!realpath(shown, real)) {
        sw_parse_error(p, n, "dir://%s: %s", name, strerror(errno));
        return false;
    }
    if (name[0] != '/' &&
        (!p->app_root || !(inside(p->app_root, real) || strcmp(p->app_root, real) == 0))) {
        sw_parse_error(p, n, "dir://%s resolves outside the app directory", name);
        return false;
    }
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        sw_parse_error(p, n, "dir://%s: not a directory", name);
        return false;
    }
    return true;
}

void sw_lib_tree_load(sw_parse *p, const sw_node *n, sw_source *src)
{
    char shown[PATH_MAX], real[PATH_MAX];
    if (!resolve_dir(p, n, n->str + 6, shown, real)) return;
    walk w = {.p = p, .n = n, .real_root = real, .shown = shown};
    walk_dir(&w, "", 0);
    if (w.failed) {
        free(w.files);
        return;
    }
    if (w.n_files) qsort(w.files, w.n_files, sizeof *w.files, by_rel);
    sw_lib_tree *t = sw_arena_alloc(p->arena, sizeof *t);
    const char *slash = strrchr(shown, '/');
    t->dir = sw_arena_strdup(p->arena, shown);
    t->name = sw_arena_strdup(p->arena, slash ? slash + 1 : shown);
    t->n = w.n_files;
    t->files = sw_arena_alloc(p->arena, (w.n_files ? w.n_files : 1) * sizeof *t->files);
    if (w.n_files) memcpy(t->files, w.files, w.n_files * sizeof *t->files);
    free(w.files);
    src->tree = t;
    set_root(&w, real, src, t);
}

static const sw_tree_file *find_rel(const sw_lib_tree *t, const char *rel)
{
    sw_tree_file key = {.rel = rel};
    if (!t->n) return NULL;
    return bsearch(&key, t->files, t->n, sizeof *t->files, by_rel);
}

const sw_tree_file *sw_lib_tree_find(const sw_lib_tree *t, const char *sub)
{
    char rel[PATH_MAX];
    size_t n = strlen(sub);
    if (n + sizeof "/init.lua" > sizeof rel) return NULL;
    for (size_t i = 0; i <= n; i++) rel[i] = sub[i] == '.' ? '/' : sub[i];
    if (n) {
        strcpy(rel + n, ".lua");
        const sw_tree_file *f = find_rel(t, rel);
        if (f) return f;
    }
    strcpy(rel + n, n ? "/init.lua" : "init.lua");
    return find_rel(t, rel);
}

bool sw_lib_tree_equal(const sw_lib_tree *a, const sw_lib_tree *b)
{
    if (!a || !b) return a == b;
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        const sw_tree_file *x = &a->files[i], *y = &b->files[i];
        if (strcmp(x->rel, y->rel) != 0 || x->len != y->len || memcmp(x->text, y->text, x->len))
            return false;
    }
    return true;
}
