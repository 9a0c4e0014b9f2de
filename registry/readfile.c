/* Whole-file reads for the loader: open without blocking, then insist on a regular file. */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads exactly n bytes (the size fstat saw); false on an error or an early end. */
static bool read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

char *sw_read_regular_file(const char *path, size_t max, const char *too_large, bool nofollow,
                           size_t *len, const char **why)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    char *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) *why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) *why = "not a regular file";
    else if ((size_t)st.st_size > max) *why = too_large;
    else if (!(buf = malloc((size_t)st.st_size + 1))) *why = "out of memory";
    else if (!read_all(fd, buf, (size_t)st.st_size)) {
        *why = "read error";
        free(buf);
        buf = NULL;
    } else {
        buf[st.st_size] = 0;
        *len = (size_t)st.st_size;
    }
    close(fd);
    return buf;
}
