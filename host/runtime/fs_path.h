/* Paths inside a volume (the `fs` module, docs/lua-api.md "fs"): splitting "volume_id:rel/path",
 * normalizing the relative part so that `..` can never climb out, and opening what it names
 * beneath the volume's directory without following a symbolic link anywhere on the way
 * (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it, else one
 * openat with O_NOFOLLOW per component from the volume's directory fd). Nothing here resolves
 * a path first and opens it later: each step holds the directory fd it continues from.
 * Pure functions; the opening ones block (they run on libuv's thread pool, fs_job.c). */
#ifndef STEWARD_FS_PATH_H
#define STEWARD_FS_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define SW_FS_PATH_MAX 4096 /* bytes of a whole "volume_id:rel/path" */

/* Splits "ns:name:rel/path" into the volume id ("ns:name", into id) and the relative part
 * (*rel points into path; "" for the volume's root; "ns:name" alone is the root too). false
 * when path does not start with a volume id. */
bool sw_fs_split(const char *path, char *id, size_t idlen, const char **rel);

/* Normalizes rel into out: no empty or "." components, leading "/" ignored (the volume's
 * root), ".." removes the previous component. "" is the root. 0, or -1 when a ".." would
 * leave the volume (or out is too small, or rel holds a NUL-free but over-long path). */
int sw_fs_normalize(const char *rel, char *out, size_t outlen);

/* Opens the directory holding the last component of the normalized rel beneath rootfd
 * (O_PATH | O_DIRECTORY), and points *leaf at that component inside rel (rel "" has no leaf:
 * *leaf is NULL and the root itself is opened). Returns the fd, or -errno (ELOOP for a
 * symbolic link on the way, ENOTDIR, ENOENT, EXDEV if the kernel saw an escape). */
int sw_fs_open_parent(int rootfd, const char *rel, const char **leaf);

/* Tests force the component walk (as on kernels before 5.6, without openat2). */
extern bool sw_fs_path_force_walk;

#endif
