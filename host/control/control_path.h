/* The control socket's file (see control_path.c). Thread: the loop's. */
#ifndef STEWARD_CONTROL_PATH_H
#define STEWARD_CONTROL_PATH_H

#include <stddef.h>
#include <sys/stat.h>
#include <uv.h>

/* Makes path free to bind: refuses a live host and anything that is not a socket, removes a
 * stale socket file. 0 or -1 with err. */
int sw_ctl_claim_path(const char *path, char *err, size_t errlen);
/* Binds server to path, mode 0600 from the start; its device and inode in *dev, *ino (to
 * remove it later only if it is still this file). 0 or a libuv error. */
int sw_ctl_bind_private(uv_pipe_t *server, const char *path, dev_t *dev, ino_t *ino);
/* Removes path if it is still the file bound (dev, ino); ino 0: never bound. */
void sw_ctl_unlink_if_ours(const char *path, dev_t dev, ino_t ino);

#endif
