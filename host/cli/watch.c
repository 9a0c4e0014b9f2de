/* The watch of `steward run --watch` (see watch.h). One uv_fs_event_t per directory: libuv's
 * UV_FS_EVENT_RECURSIVE is not supported on Linux, so the tree is walked at the start and again
 * when a directory appears (and after each quiet period, which also drops the watches of
 * directories that are gone). Editors write in bursts (a temporary file, a rename, a chmod):
 * the debounce timer restarts at each relevant event, so one save is one reload. */
#include "watch.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct wdir {
    uv_fs_event_t h;
    char *path; /* as walked from the app directory: "app/src" */
    ino_t ino;  /* the directory watched: one removed and made again is another */
    dev_t dev;
    struct sw_watch *w;
    bool seen; /* scratch of a walk: still there */
} wdir;

struct sw_watch {
    uv_loop_t *loop;
    char *root;
    const char *ignore_name; /* the control socket's file name, or NULL */
    char *ignore;
    sw_log *log;
    sw_watch_fn on_change;
    void *arg;
    uv_timer_t debounce;
    wdir **dirs;
    size_t n, cap;
    char last[1024]; /* the last changed file, relative to root */
    bool full_warned;
    unsigned open; /* handles still to close */
};

static void warn(sw_watch *w, const char *msg, const char *path, const char *why)
{
    sw_log_field f[2] = {{.key = "path", .type = SW_LF_STR, .s = path},
                         {.key = "error", .type = SW_LF_STR, .s = why}};
    sw_log_write(w->log, SW_LOG_WARN, NULL, msg, f, why ? 2 : 1);
}

/* Files whose change reloads: the registry's YAML and the Lua it names. */
static bool relevant(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot &&
           (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 || strcmp(dot, ".lua") == 0);
}

static bool dir_stat(const char *path, struct stat *st)
{
    return lstat(path, st) == 0 && S_ISDIR(st->st_mode); /* a symlink is not followed: no loops */
}

static bool is_dir(const char *path)
{
    struct stat st;
    return dir_stat(path, &st);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void free_closed(uv_handle_t *h);
static void on_event(uv_fs_event_t *h, const char *filename, int events, int status);

static wdir *find_dir(sw_watch *w, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < w->n; i++) {
        wdir *d = w->dirs[i];
        if (strcmp(d->path, path) == 0 && d->ino == st->st_ino && d->dev == st->st_dev) return d;
    }
    return NULL;
}

/* A watch on directory path (taking it), unless it has one; false when it cannot be watched. */
static bool add_dir(sw_watch *w, char *path, const struct stat *st)
{
    wdir *d = find_dir(w, path, st);
    if (d) {
        d->seen = true;
        free(path);
        return true;
    }
    if (w->n == SW_WATCH_MAX_DIRS) {
        if (!w->full_warned)
            warn(w, "watch: too many directories, some are not watched", path, NULL);
        w->full_warned = true;
        free(path);
        return false;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        wdir **v = realloc(w->dirs, cap * sizeof *v);
        if (!v) {
            free(path);
            return false;
        }
        w->dirs = v;
        w->cap = cap;
    }
    d = calloc(1, sizeof *d);
    int rc = d ? uv_fs_event_init(w->loop, &d->h) : UV_ENOMEM;
    if (rc == 0) {
        d->h.data = d;
        d->path = path;
        d->ino = st->st_ino;
        d->dev = st->st_dev;
        d->w = w;
        d->seen = true;
        w->open++;
        rc = uv_fs_event_start(&d->h, on_event, path, 0);
        w->dirs[w->n++] = d;
        if (rc == 0) return true;
        w->n--;
        warn(w, "watch: cannot watch a directory", path, uv_strerror(rc));
        uv_close((uv_handle_t *)&d->h, free_closed); /* frees path */
        return false;
    }
    warn(w, "watch: cannot watch a directory", path, uv_strerror(rc));
    free(d);
    free(path);
    return false;
}

/* Watches path and every directory under it, dot directories left out. */
static void walk(sw_watch *w, const char *path)
{
    struct stat st;
    if (!dir_stat(path, &st)) return;
    char *own = strdup(path);
    if (!own || !add_dir(w, own, &st)) return;
    DIR *dir = opendir(path);
    if (!dir) return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        char *sub = join(path, e->d_name);
        if (sub) walk(w, sub);
        free(sub);
    }
    closedir(dir);
}

/* Walks the tree again: new directories are watched, gone ones dropped. */
static void rewalk(sw_watch *w)
{
    for (size_t i = 0; i < w->n; i++) w->dirs[i]->seen = false;
    walk(w, w->root);
    size_t kept = 0;
    for (size_t i = 0; i < w->n; i++) {
        wdir *d = w->dirs[i];
        if (d->seen) w->dirs[kept++] = d;
        else uv_close((uv_handle_t *)&d->h, free_closed);
    }
    w->n = kept;
}

static void quiet(uv_timer_t *t)
{
    sw_watch *w = t->data;
    rewalk(w);
    w->on_change(w->arg, w->last);
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
    (void)events;
    wdir *d = h->data;
    sw_watch *w = d->w;
    if (status < 0 || !filename || filename[0] == '.') return;
    if (w->ignore_name && strcmp(filename, w->ignore_name) == 0) return;
    char *path = join(d->path, filename);
    if (!path) return;
    bool dir = !relevant(filename) && is_dir(path);
    if (dir) rewalk(w); /* watched now: files written into it next are seen */
    if (relevant(filename) || dir) {
        const char *rel =
            strncmp(path, w->root, strlen(w->root)) == 0 ? path + strlen(w->root) : path;
        snprintf(w->last, sizeof w->last, "%s", rel[0] == '/' ? rel + 1 : rel);
        uv_timer_start(&w->debounce, quiet, SW_WATCH_DEBOUNCE_MS, 0);
    }
    free(path);
}

sw_watch *sw_watch_open(uv_loop_t *loop, const char *dir, const char *ignore, sw_log *log,
                        sw_watch_fn on_change, void *arg, char *err, size_t errlen)
{
    sw_watch *w = calloc(1, sizeof *w);
    char *root = strdup(dir);
    size_t len = root ? strlen(root) : 0;
    while (len > 1 && root[len - 1] == '/') root[--len] = 0; /* "app/" walks as "app" */
    if (!w || !root) {
        free(w);
        free(root);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *w = (sw_watch){.loop = loop, .root = root, .log = log, .on_change = on_change, .arg = arg};
    if (ignore) {
        w->ignore = strdup(ignore);
        const char *slash = w->ignore ? strrchr(w->ignore, '/') : NULL;
        w->ignore_name = slash ? slash + 1 : w->ignore;
    }
    uv_timer_init(loop, &w->debounce);
    w->debounce.data = w;
    w->open = 1;
    walk(w, root);
    if (w->n == 0) {
        snprintf(err, errlen, "cannot watch %s", dir);
        sw_watch_close(w);
        return NULL;
    }
    return w;
}

/* Each handle's close: the directory's memory, and the watch's with the last one. */
static void free_closed(uv_handle_t *h)
{
    sw_watch *w;
    if (h->type == UV_TIMER) {
        w = h->data;
    } else {
        wdir *d = h->data;
        w = d->w;
        free(d->path);
        free(d);
    }
    if (--w->open) return;
    free(w->dirs);
    free(w->root);
    free(w->ignore);
    free(w);
}

void sw_watch_close(sw_watch *w)
{
    if (!w) return;
    size_t n = w->n;
    w->n = 0;
    for (size_t i = 0; i < n; i++) uv_close((uv_handle_t *)&w->dirs[i]->h, free_closed);
    uv_close((uv_handle_t *)&w->debounce, free_closed);
}
