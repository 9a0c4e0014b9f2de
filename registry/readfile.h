/* Reading a whole file the registry names (a YAML file, a file:// source) without ever
 * blocking on one that is not a regular file: a FIFO, a device or a socket is refused. */
#ifndef STEWARD_READFILE_H
#define STEWARD_READFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Opens path with O_NONBLOCK (a FIFO without a writer opens at once instead of waiting for
 * one) and O_CLOEXEC, plus O_NOFOLLOW when nofollow (a symlink as the last component is
 * refused), fstats the descriptor and reads the file only if it is regular and at most max
 * bytes. Returns a malloc'd buffer of *len bytes plus a terminating NUL, or NULL with *why set
 * to a static message: strerror(errno) of the failed open, "not a regular file", too_large
 * (the caller's wording of its limit), "out of memory" or "read error". Thread: any. */
char *sw_read_regular_file(const char *path, size_t max, const char *too_large, bool nofollow,
                           size_t *len, const char **why);

#endif
