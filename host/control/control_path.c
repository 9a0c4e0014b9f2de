/* The control socket's file: the default path, claiming it (a live host keeps it, a stale
 * socket file is replaced, anything else is refused), binding it private (0600 from the
 * start) and removing it only while it is still ours. */
#include "control_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "control_client.h"

/* Makes path free to bind: refuses a live host and anything that is not a socket, removes a
 * stale socket file. 0 or -1 with err. */
int sw_ctl_claim_path(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        snprintf(err, errlen, "control socket path too long (at most %zu bytes): %s",
                 sizeof addr.sun_path - 1, path);
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot use control socket %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket: not replacing it", path);
        return -1;
    }
    int fd = sw_unix_connect(path), e = errno;
    if (fd >= 0) {
        close(fd);
        snprintf(err, errlen, "another host is already listening on %s", path);
        return -1;
    }
    if (e != ECONNREFUSED && e != ENOENT) {
        snprintf(err, errlen, "cannot use control socket %s: %s", path, strerror(e));
        return -1;
    }
    unlink(path); /* stale: its host is gone */
    return 0;
}

int sw_ctl_bind_private(uv_pipe_t *server, const char *path, dev_t *dev, ino_t *ino)
{
    mode_t old = umask(0177); /* created 0600: never a moment when others may connect */
    int rc = uv_pipe_bind(server, path);
    umask(old);
    struct stat st;
    if (rc == 0 && (chmod(path, 0600) != 0 || stat(path, &st) != 0))
        rc = uv_translate_sys_error(errno);
    if (rc == 0) {
        *dev = st.st_dev;
        *ino = st.st_ino;
    }
    return rc;
}

void sw_ctl_unlink_if_ours(const char *path, dev_t dev, ino_t ino)
{
    struct stat st;
    if (ino && lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) unlink(path);
}

char *sw_control_default_path(const char *dir, const char *cfg_path)
{
    if (cfg_path) return strdup(cfg_path);
    const char *d = dir && *dir ? dir : ".";
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/') n--;
    char *p = malloc(n + sizeof "/.steward.sock");
    if (p) sprintf(p, "%.*s/.steward.sock", (int)n, d);
    return p;
}
