/* The per-service log files (log_files.h). A queued line is framed as "SERVICE\0LINE\n" (an
 * empty SERVICE for host.log; ids hold no NUL and lines no raw newline or NUL), so the writer's
 * ring and its drop count work unchanged; the sink splits a region back into lines and writes
 * each run of one service's lines with one writev. Open files live in a small table only the
 * writer thread touches (the sink is its sole user). */
#include "log_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define BATCH_LINES 64
#define FRAME_STACK 4096

typedef struct log_file {
    char *key; /* the framed service ("" for host) */
    int fd;
    uint64_t size;
    uint64_t used_at;
} log_file;

struct sw_log_files {
    char *dir;
    uint64_t max_size;
    unsigned max_files;
    sw_log_writer *writer;
    log_file open[SW_LOG_FILES_OPEN];
    size_t n_open;
    uint64_t clock; /* uses, for the least recently used */
    sw_log_notice_fn notice;
    void *notice_arg;
};

size_t sw_log_file_name(const char *service, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    if (!service || !*service) service = "host";
    for (const unsigned char *s = (const unsigned char *)service; *s; s++) {
        char c = (char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '-' || (c == '.' && s != (const unsigned char *)service);
        if (n + 8 >= size) return 0;
        if (plain) out[n++] = c;
        else if (c == ':') out[n++] = '@';
        else {
            out[n++] = '%';
            out[n++] = hex[*s >> 4];
            out[n++] = hex[*s & 15];
        }
    }
    memcpy(out + n, ".log", 5);
    return n + 4;
}

/* ---- files (writer thread) ---- */

/* DIR/NAME.log, with ".K" when k > 0; false when it does not fit. */
static bool path_of(const sw_log_files *f, const char *key, unsigned k, char *out, size_t size)
{
    char name[NAME_MAX + 1];
    if (!sw_log_file_name(key, name, sizeof name)) return false;
    int n = k ? snprintf(out, size, "%s/%s.%u", f->dir, name, k)
              : snprintf(out, size, "%s/%s", f->dir, name);
    return n > 0 && (size_t)n < size;
}

static void close_file(log_file *lf)
{
    if (lf->fd >= 0) close(lf->fd);
    free(lf->key);
}

/* NAME.log -> NAME.log.1 -> ... -> NAME.log.<max_files-1>; the oldest goes. */
static void rotate(sw_log_files *f, log_file *lf)
{
    char from[PATH_MAX], to[PATH_MAX];
    close(lf->fd);
    lf->fd = -1;
    for (unsigned k = f->max_files - 1; k >= 1; k--)
        if (path_of(f, lf->key, k - 1, from, sizeof from) && path_of(f, lf->key, k, to, sizeof to))
            rename(from, to);
    if (f->max_files <= 1 && path_of(f, lf->key, 0, from, sizeof from)) unlink(from);
    lf->size = 0;
}

static bool open_fd(sw_log_files *f, log_file *lf)
{
    char path[PATH_MAX];
    if (!path_of(f, lf->key, 0, path, sizeof path)) return false;
    lf->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    struct stat st;
    lf->size = lf->fd >= 0 && fstat(lf->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    return lf->fd >= 0;
}

/* The open file of key, opened (closing the least recently used) when need be; NULL when it
 * cannot be. */
static log_file *file_of(sw_log_files *f, const char *key)
{
    log_file *lf = NULL;
    for (size_t i = 0; i < f->n_open && !lf; i++)
        if (strcmp(f->open[i].key, key) == 0) lf = &f->open[i];
    if (!lf) {
        if (f->n_open == SW_LOG_FILES_OPEN) {
            size_t old = 0;
            for (size_t i = 1; i < f->n_open; i++)
                if (f->open[i].used_at < f->open[old].used_at) old = i;
            close_file(&f->open[old]);
            f->open[old] = f->open[--f->n_open];
        }
        lf = &f->open[f->n_open];
        *lf = (log_file){.key = strdup(key), .fd = -1};
        if (!lf->key) return NULL;
        f->n_open++;
    }
    lf->used_at = ++f->clock;
    if (lf->fd < 0 && !open_fd(f, lf)) return NULL;
    return lf;
}

static bool write_batch(sw_log_files *f, const char *key, struct iovec *iov, int n, size_t bytes)
{
    log_file *lf = file_of(f, key);
    if (lf && lf->size > 0 && lf->size + bytes > f->max_size) {
        rotate(f, lf);
        if (!open_fd(f, lf)) return false;
    }
    if (!lf) return false;
    ssize_t k = writev(lf->fd, iov, n); /* a regular file: whole unless the disk is full */
    if (k > 0) lf->size += (uint64_t)k;
    return k == (ssize_t)bytes;
}

/* One frame at p (n bytes left): its key and line; false at a broken frame. */
static bool next_frame(const char *p, size_t n, const char **key, const char **line,
                       size_t *line_len)
{
    const char *z = memchr(p, 0, n);
    const char *nl = z ? memchr(z + 1, '\n', (size_t)(p + n - z - 1)) : NULL;
    if (!nl) return false;
    *key = p;
    *line = z + 1;
    *line_len = (size_t)(nl + 1 - *line);
    return true;
}

/* The writer's sink: the region's lines, each run of one key in one writev (a run stops where
 * the next line would pass the rotation size). */
static bool sink(void *arg, const char *p, size_t n)
{
    sw_log_files *f = arg;
    bool ok = true;
    const char *end = p + n;
    while (p < end) {
        struct iovec iov[BATCH_LINES];
        int k = 0;
        size_t bytes = 0;
        const char *key = NULL, *k2, *line;
        size_t len;
        while (k < BATCH_LINES && p < end && next_frame(p, (size_t)(end - p), &k2, &line, &len) &&
               (!key || (strcmp(k2, key) == 0 && bytes + len <= f->max_size))) {
            key = k2;
            iov[k++] = (struct iovec){.iov_base = (void *)line, .iov_len = len};
            bytes += len;
            p = line + len;
        }
        if (k == 0) return false; /* cannot be: frames are made whole */
        ok = write_batch(f, key, iov, k, bytes) && ok;
    }
    return ok;
}

/* The drop notice goes to host.log. */
static size_t notice(void *arg, uint64_t dropped, char *out, size_t cap)
{
    sw_log_files *f = arg;
    if (!f->notice || cap < 2) return 0;
    size_t n = f->notice(f->notice_arg, dropped, out + 1, cap - 1);
    if (n == 0) return 0;
    out[0] = 0;
    return n + 1;
}

/* ---- life ---- */

static bool usable_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "log.dir %s: cannot create it: %s", dir, strerror(errno));
        return false;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "log.dir %s: not a directory", dir);
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "log.dir %s: cannot write there: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

sw_log_files *sw_log_files_open(const char *dir, uint64_t max_size, unsigned max_files,
                                sw_log_notice_fn notice_fn, void *notice_arg, char *err,
                                size_t errlen)
{
    if (!usable_dir(dir, err, errlen)) return NULL;
    sw_log_files *f = calloc(1, sizeof *f);
    if (f) f->dir = strdup(dir);
    if (!f || !f->dir) {
        free(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->max_size = max_size ? max_size : SW_LOG_FILES_MAX_SIZE;
    f->max_files = max_files ? max_files : SW_LOG_FILES_MAX_FILES;
    f->notice = notice_fn;
    f->notice_arg = notice_arg;
    sw_log_writer_config wc = {.sink = sink,
                               .buffered = true,
                               .capacity = SW_LOG_FILES_BUFFER,
                               .notice = notice,
                               .arg = f,
                               .thread_name = "steward-logf"};
    f->writer = sw_log_writer_new(&wc);
    if (!f->writer) {
        free(f->dir);
        free(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return f;
}

void sw_log_files_put(sw_log_files *f, const char *service, const char *line, size_t n)
{
    if (!f || n == 0) return;
    size_t key = service ? strlen(service) : 0, total = key + 1 + n;
    char stack[FRAME_STACK];
    char *frame = total <= sizeof stack ? stack : malloc(total);
    if (!frame) return;
    if (key) memcpy(frame, service, key);
    frame[key] = 0;
    memcpy(frame + key + 1, line, n);
    sw_log_writer_put(f->writer, frame, total);
    if (frame != stack) free(frame);
}

bool sw_log_files_flush(sw_log_files *f, int64_t timeout_ns)
{
    return !f || sw_log_writer_flush(f->writer, timeout_ns);
}

void sw_log_files_free(sw_log_files *f, int64_t timeout_ns)
{
    if (!f) return;
    sw_log_writer_free(f->writer, timeout_ns);
    for (size_t i = 0; i < f->n_open; i++) close_file(&f->open[i]);
    free(f->dir);
    free(f);
}
