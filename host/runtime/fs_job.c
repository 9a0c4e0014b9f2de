/* The blocking side of fs operations (see fs_job.h): each runs whole on a thread-pool thread. */
#include "fs_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "fs_path.h"

#define READ_CHUNK (64 * 1024)

const char *sw_fs_strerror(int err)
{
    switch (err) {
    case SW_FS_EIRREGULAR: return "not a regular file";
    case SW_FS_ETOOBIG: return "file too large";
    case SW_FS_ETOOMANY: return "too many entries";
    case SW_FS_EROOT: return "the volume's root";
    case SW_FS_ELINE: return "line too long";
    case SW_FS_ENOMEM: return "host memory limit reached";
    case -ELOOP: return "symbolic links are not followed";
    case -EXDEV: return "outside the volume";
    default: return uv_strerror(err);
    }
}

/* ---- opening beneath the volume ---- */

static int open_root(const char *root)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* The volume's root and the directory holding rel's last component (*leaf; NULL: rel is the
 * root). Returns the directory's fd (the caller closes it) or an error. */
static int open_dir_of(const char *root, const char *rel, const char **leaf)
{
    int rootfd = open_root(root);
    if (rootfd < 0) return rootfd;
    int fd = sw_fs_open_parent(rootfd, rel, leaf);
    close(rootfd);
    return fd;
}

/* Opens a regular file: never through a link, never blocking on a FIFO (O_NONBLOCK until
 * fstat says it is regular). */
static int open_file(const char *root, const char *rel, int flags, unsigned mode)
{
    const char *leaf;
    int dir = open_dir_of(root, rel, &leaf);
    if (dir < 0) return dir;
    int fd = leaf ? openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode)
                  : (errno = EISDIR, -1);
    int e = errno;
    close(dir);
    if (fd < 0) return -e;
    struct stat st;
    int rc = fstat(fd, &st) != 0   ? -errno
             : S_ISREG(st.st_mode) ? 0
             : S_ISDIR(st.st_mode) ? -EISDIR
                                   : SW_FS_EIRREGULAR;
    if (rc != 0) {
        close(fd);
        return rc;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

bool sw_fs_job_take(sw_fs_job *j, size_t n)
{
    if (!j->budget) return true;
    if (!sw_vm_budget_take(j->budget, n, false)) return false;
    j->taken += n;
    return true;
}

/* ---- whole files ---- */

static int read_all(sw_fs_job *j, int fd, size_t max, char **out, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    if ((uint64_t)st.st_size > max) return SW_FS_ETOOBIG;
    size_t cap = (size_t)st.st_size + 1, n = 0; /* +1: sees the end without a second read */
    if (!sw_fs_job_take(j, cap)) return SW_FS_ENOMEM;
    char *buf = malloc(cap);
    if (!buf) return -ENOMEM;
    for (;;) {
        if (n == cap) { /* grew since fstat */
            if (cap > max) {
                free(buf);
                return SW_FS_ETOOBIG;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            if (!sw_fs_job_take(j, ncap - cap)) {
                free(buf);
                return SW_FS_ENOMEM;
            }
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return -ENOMEM;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = -errno;
            free(buf);
            return e;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n > max) {
        free(buf);
        return SW_FS_ETOOBIG;
    }
    *out = buf;
    *len = n;
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -errno;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

static void op_read(sw_fs_job *j)
{
    int fd = open_file(j->root, j->rel, O_RDONLY, 0);
    if (fd < 0) {
        j->err = fd;
        return;
    }
    j->err = read_all(j, fd, j->max, &j->data, &j->len);
    close(fd);
}

static void op_write(sw_fs_job *j)
{
    int flags = O_WRONLY | O_CREAT | (j->append ? O_APPEND : O_TRUNC);
    int fd = open_file(j->root, j->rel, flags, j->mode);
    if (fd < 0) {
        j->err = fd;
        return;
    }
    j->err = write_all(fd, j->data, j->len);
    if (close(fd) != 0 && !j->err) j->err = -errno; /* NFS reports write errors here */
}

static void op_open(sw_fs_job *j)
{
    int fd = open_file(j->root, j->rel, j->flags, j->mode);
    if (fd < 0) j->err = fd;
    else j->fd = fd;
}

/* ---- directories ---- */

/* err, or ELOOP when name (in dirfd) is a link: O_DIRECTORY | O_NOFOLLOW says ENOTDIR. */
static int link_or(int dirfd, const char *name, int err)
{
    struct stat st;
    if (err == -ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
        return -ELOOP;
    return err;
}

typedef struct names {
    char *buf;
    size_t len, cap;
    size_t *at; /* offsets of entries in buf */
    size_t n, cap_at;
} names;

static bool names_add(names *ns, char type, const char *name)
{
    size_t need = strlen(name) + 2;
    if (ns->len + need > ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 4096;
        while (cap < ns->len + need) cap *= 2;
        char *b = realloc(ns->buf, cap);
        if (!b) return false;
        ns->buf = b;
        ns->cap = cap;
    }
    if (ns->n == ns->cap_at) {
        size_t cap = ns->cap_at ? ns->cap_at * 2 : 64;
        size_t *a = realloc(ns->at, cap * sizeof *a);
        if (!a) return false;
        ns->at = a;
        ns->cap_at = cap;
    }
    ns->at[ns->n++] = ns->len;
    ns->buf[ns->len] = type;
    memcpy(ns->buf + ns->len + 1, name, need - 1);
    ns->len += need;
    return true;
}

static _Thread_local const char *sort_buf;
static int by_name(const void *a, const void *b)
{
    return strcmp(sort_buf + *(const size_t *)a + 1, sort_buf + *(const size_t *)b + 1);
}

static char type_char(unsigned char d_type, int dirfd, const char *name)
{
    if (d_type == DT_UNKNOWN) {
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return '?';
        return S_ISREG(st.st_mode)   ? 'f'
               : S_ISDIR(st.st_mode) ? 'd'
               : S_ISLNK(st.st_mode) ? 'l'
                                     : '?';
    }
    return d_type == DT_REG ? 'f' : d_type == DT_DIR ? 'd' : d_type == DT_LNK ? 'l' : '?';
}

/* The sorted entries, packed: what api_fs.c turns into {name, type} tables. */
static int list_dir(int fd, char **out, size_t *len)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    names ns = {0};
    int err = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (ns.n >= SW_FS_LIST_MAX) {
            err = SW_FS_ETOOMANY;
            break;
        }
        if (!names_add(&ns, type_char(de->d_type, dirfd(d), de->d_name), de->d_name)) {
            err = -ENOMEM;
            break;
        }
    }
    closedir(d);
    char *packed = err ? NULL : malloc(ns.len + 1);
    if (!err && !packed) err = -ENOMEM;
    if (!err) {
        sort_buf = ns.buf;
        qsort(ns.at, ns.n, sizeof *ns.at, by_name);
        size_t k = 0;
        for (size_t i = 0; i < ns.n; i++) {
            size_t n = strlen(ns.buf + ns.at[i] + 1) + 2;
            memcpy(packed + k, ns.buf + ns.at[i], n);
            k += n;
        }
        *out = packed;
        *len = k;
    }
    free(ns.buf);
    free(ns.at);
    return err;
}

static void op_list(sw_fs_job *j)
{
    const char *leaf;
    int dir = open_dir_of(j->root, j->rel, &leaf);
    if (dir < 0) {
        j->err = dir;
        return;
    }
    int fd = dir;
    if (leaf) {
        fd = openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = fd < 0 ? link_or(dir, leaf, -errno) : 0;
        close(dir);
        if (fd < 0) {
            j->err = e;
            return;
        }
    }
    j->err = list_dir(fd, &j->data, &j->len);
}

static void op_stat(sw_fs_job *j)
{
    const char *leaf;
    int dir = open_dir_of(j->root, j->rel, &leaf);
    if (dir < 0) {
        j->err = dir;
        return;
    }
    int rc = leaf ? fstatat(dir, leaf, &j->st, AT_SYMLINK_NOFOLLOW) : fstat(dir, &j->st);
    j->err = rc == 0 ? 0 : -errno;
    close(dir);
}

/* mkdir -p: each component made or, when it exists, entered (never through a link). */
static int mkdir_parents(int rootfd, const char *rel, unsigned mode)
{
    char path[SW_FS_PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof path) return -ENAMETOOLONG;
    memcpy(path, rel, n + 1);
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -errno;
    for (char *c = path, *next; c && *c; c = next) {
        next = strchr(c, '/');
        if (next) *next++ = 0;
        if (mkdirat(fd, c, mode) != 0 && errno != EEXIST) {
            int e = -errno;
            close(fd);
            return e;
        }
        int sub = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = sub < 0 ? link_or(fd, c, -errno) : 0;
        close(fd);
        if (sub < 0) return e;
        fd = sub;
    }
    close(fd);
    return 0;
}

static void op_mkdir(sw_fs_job *j)
{
    if (!*j->rel) {
        j->err = j->parents ? 0 : -EEXIST;
        return;
    }
    if (j->parents) {
        int rootfd = open_root(j->root);
        j->err = rootfd < 0 ? rootfd : mkdir_parents(rootfd, j->rel, j->mode);
        if (rootfd >= 0) close(rootfd);
        return;
    }
    const char *leaf;
    int dir = open_dir_of(j->root, j->rel, &leaf);
    if (dir < 0) {
        j->err = dir;
        return;
    }
    j->err = mkdirat(dir, leaf, j->mode) == 0 ? 0 : -errno;
    close(dir);
}

static void op_remove(sw_fs_job *j)
{
    const char *leaf;
    int dir = open_dir_of(j->root, j->rel, &leaf);
    if (dir < 0) {
        j->err = dir;
        return;
    }
    if (!leaf) j->err = SW_FS_EROOT;
    else if (unlinkat(dir, leaf, 0) == 0) j->err = 0;
    else if (errno == EISDIR) j->err = unlinkat(dir, leaf, AT_REMOVEDIR) == 0 ? 0 : -errno;
    else j->err = -errno;
    close(dir);
}

static void op_rename(sw_fs_job *j)
{
    const char *leaf, *leaf2;
    int dir = open_dir_of(j->root, j->rel, &leaf);
    if (dir < 0) {
        j->err = dir;
        return;
    }
    int dir2 = open_dir_of(j->root2, j->rel2, &leaf2);
    if (dir2 < 0) j->err = dir2;
    else if (!leaf || !leaf2) j->err = SW_FS_EROOT;
    else j->err = renameat(dir, leaf, dir2, leaf2) == 0 ? 0 : -errno;
    close(dir);
    if (dir2 >= 0) close(dir2);
}

/* ---- open files ---- */

static void op_fread(sw_fs_job *j)
{
    struct stat st; /* f:read(64 MB) near the end of a small file allocates what is left */
    off_t pos = lseek(j->fd, 0, SEEK_CUR);
    if (fstat(j->fd, &st) == 0 && pos >= 0 && st.st_size - pos < (off_t)j->max)
        j->max = st.st_size > pos ? (size_t)(st.st_size - pos) : 1;
    if (!sw_fs_job_take(j, j->max)) {
        j->err = SW_FS_ENOMEM;
        return;
    }
    j->data = malloc(j->max ? j->max : 1);
    if (!j->data) {
        j->err = -ENOMEM;
        return;
    }
    ssize_t r;
    do r = read(j->fd, j->data, j->max);
    while (r < 0 && errno == EINTR);
    j->err = r < 0 ? -errno : 0;
    j->len = r > 0 ? (size_t)r : 0;
}

static void op_fread_line(sw_fs_job *j)
{
    if (!j->data && !(j->data = malloc(SW_FS_LINE_MAX))) {
        j->err = -ENOMEM;
        return;
    }
    size_t scanned = 0;
    while (!memchr(j->data + scanned, '\n', j->len - scanned)) {
        scanned = j->len;
        if (j->len >= SW_FS_LINE_MAX) return; /* api_fs_file.c: line too long */
        ssize_t r = read(j->fd, j->data + j->len, SW_FS_LINE_MAX - j->len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            j->err = -errno;
            return;
        }
        if (r == 0) {
            j->eof = true;
            return;
        }
        j->len += (size_t)r;
    }
}

static void op_fwrite(sw_fs_job *j)
{
    if (j->unread && lseek(j->fd, -(off_t)j->unread, SEEK_CUR) < 0 && errno != ESPIPE) {
        j->err = -errno;
        return;
    }
    j->err = write_all(j->fd, j->data, j->len);
}

static void op_fseek(sw_fs_job *j)
{
    off_t off = (off_t)j->offset - (j->whence == SEEK_CUR ? (off_t)j->unread : 0);
    off_t pos = lseek(j->fd, off, j->whence);
    j->err = pos < 0 ? -errno : 0;
    j->pos = pos;
}

void sw_fs_job_run(sw_fs_job *j)
{
    switch (j->op) {
    case SW_FS_OP_READ: op_read(j); break;
    case SW_FS_OP_WRITE: op_write(j); break;
    case SW_FS_OP_OPEN: op_open(j); break;
    case SW_FS_OP_LIST: op_list(j); break;
    case SW_FS_OP_STAT: op_stat(j); break;
    case SW_FS_OP_MKDIR: op_mkdir(j); break;
    case SW_FS_OP_REMOVE: op_remove(j); break;
    case SW_FS_OP_RENAME: op_rename(j); break;
    case SW_FS_OP_FREAD: op_fread(j); break;
    case SW_FS_OP_FREAD_LINE: op_fread_line(j); break;
    case SW_FS_OP_FWRITE: op_fwrite(j); break;
    case SW_FS_OP_FSEEK: op_fseek(j); break;
    case SW_FS_OP_CLOSE:
        j->err = close(j->fd) == 0 ? 0 : -errno;
        j->fd = -1;
        break;
    }
}

void sw_fs_job_clear(sw_fs_job *j, bool close_fd)
{
    if (close_fd && j->fd >= 0 && (j->op == SW_FS_OP_OPEN || j->op == SW_FS_OP_CLOSE)) close(j->fd);
    j->fd = -1;
    free(j->root);
    free(j->rel);
    free(j->root2);
    free(j->rel2);
    free(j->data);
    j->root = j->rel = j->root2 = j->rel2 = j->data = NULL;
    if (j->taken) sw_vm_budget_give(j->budget, j->taken);
    j->taken = 0;
}
