/* Volume paths (see fs_path.h): split, normalize, and open beneath a directory fd. */
#include "fs_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

bool sw_fs_path_force_walk = false;

/* [A-Za-z0-9_.-]+, as registry names (registry/schema.c sw_valid_name). */
static size_t name_len(const char *s)
{
    size_t n = 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
           (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.' || s[n] == '-')
        n++;
    return n;
}

bool sw_fs_split(const char *path, char *id, size_t idlen, const char **rel)
{
    size_t ns = name_len(path);
    if (!ns || path[ns] != ':') return false;
    size_t name = name_len(path + ns + 1);
    if (!name) return false;
    size_t n = ns + 1 + name;
    if (path[n] != ':' && path[n] != 0) return false;
    if (n >= idlen) return false;
    memcpy(id, path, n);
    id[n] = 0;
    *rel = path[n] ? path + n + 1 : path + n;
    return true;
}

int sw_fs_normalize(const char *rel, char *out, size_t outlen)
{
    size_t len = 0;
    const char *s = rel;
    while (*s) {
        while (*s == '/') s++;
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0) break;
        if (n == 1 && s[0] == '.') {
            /* nothing */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            if (len == 0) return -1; /* above the volume's root */
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 0) len--; /* the separator before it */
        } else {
            if (len + (len ? 1 : 0) + n + 1 > outlen) return -1;
            if (len) out[len++] = '/';
            memcpy(out + len, s, n);
            len += n;
        }
        s += n;
    }
    if (outlen == 0) return -1;
    out[len] = 0;
    return 0;
}

/* O_PATH | O_NOFOLLOW opens a link itself (where O_DIRECTORY would say only ENOTDIR): the
 * fstat after it tells a link (ELOOP) from a file (ENOTDIR). */
#define DIR_FLAGS (O_PATH | O_CLOEXEC | O_NOFOLLOW)

/* fd if it is a directory; else closes it and returns ELOOP (a link) or ENOTDIR. */
static int must_be_dir(int fd)
{
    struct stat st;
    int err = fstat(fd, &st) != 0   ? -errno
              : S_ISDIR(st.st_mode) ? 0
              : S_ISLNK(st.st_mode) ? -ELOOP
                                    : -ENOTDIR;
    if (err == 0) return fd;
    close(fd);
    return err;
}

/* 0: not known yet, 1: openat2 works, -1: the kernel has none (ENOSYS). */
static atomic_int have_openat2;

static int open_beneath_openat2(int rootfd, const char *dir)
{
    struct open_how how = {.flags = DIR_FLAGS,
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, rootfd, dir, &how, sizeof how);
    return fd >= 0 ? must_be_dir((int)fd) : -errno;
}

/* One component at a time, never following a link: each openat holds the fd it started from. */
static int open_beneath_walk(int rootfd, char *dir)
{
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -errno;
    for (char *c = dir, *next; c && *c; c = next) {
        next = strchr(c, '/');
        if (next) *next++ = 0;
        int sub = openat(fd, c, DIR_FLAGS);
        int e = errno;
        close(fd);
        if (sub < 0) return -e;
        if ((fd = must_be_dir(sub)) < 0) return fd;
    }
    return fd;
}

int sw_fs_open_parent(int rootfd, const char *rel, const char **leaf)
{
    char dir[SW_FS_PATH_MAX];
    const char *slash = strrchr(rel, '/');
    *leaf = *rel ? (slash ? slash + 1 : rel) : NULL;
    size_t n = slash ? (size_t)(slash - rel) : 0;
    if (n >= sizeof dir) return -ENAMETOOLONG;
    memcpy(dir, rel, n);
    dir[n] = 0;
    if (n == 0) { /* the root itself */
        int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
        return fd >= 0 ? fd : -errno;
    }
    if (!sw_fs_path_force_walk && atomic_load(&have_openat2) >= 0) {
        int fd = open_beneath_openat2(rootfd, dir);
        if (fd != -ENOSYS) {
            atomic_store(&have_openat2, 1);
            return fd;
        }
        atomic_store(&have_openat2, -1);
    }
    return open_beneath_walk(rootfd, dir);
}
