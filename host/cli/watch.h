/* `steward run --watch` (docs/supervision.md "Watch mode"): libuv fs events on every directory
 * under the app directory (Linux's inotify does not recurse: one watch per directory, new
 * directories are watched as they appear). A change of a YAML or Lua file calls on_change once
 * the directory has been quiet for SW_WATCH_DEBOUNCE_MS; dot files and dot directories are
 * ignored, and so is the control socket. Everything runs on the loop's thread. */
#ifndef STEWARD_WATCH_H
#define STEWARD_WATCH_H

#include <stddef.h>
#include <uv.h>

#include "log.h"

#define SW_WATCH_DEBOUNCE_MS 200
#define SW_WATCH_MAX_DIRS    4096 /* directories watched at most; more are logged and skipped */

typedef struct sw_watch sw_watch;

/* file: the last changed file, relative to the app directory (borrowed for the call). */
typedef void (*sw_watch_fn)(void *arg, const char *file);

/* Watches dir and every directory under it. ignore: a path to leave alone (the control
 * socket), or NULL; log: where directories that cannot be watched are told (borrowed). NULL
 * with err when dir itself cannot be watched. */
sw_watch *sw_watch_open(uv_loop_t *loop, const char *dir, const char *ignore, sw_log *log,
                        sw_watch_fn on_change, void *arg, char *err, size_t errlen);
/* Stops watching; the memory goes once the loop has closed its handles. NULL: nothing. */
void sw_watch_close(sw_watch *w);

#endif
