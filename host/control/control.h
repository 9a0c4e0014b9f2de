/* The control socket (docs/operating.md): a Unix-domain stream socket served by the
 * supervisor's libuv loop, speaking newline-delimited JSON (control_request.h). Created mode
 * 0600 and only the user the host runs as may use it (peer credentials are checked on every
 * connection); another live host on the same path makes the open fail, a stale socket file is
 * replaced, and the file is removed on close. Thread: the loop's. */
#ifndef STEWARD_CONTROL_H
#define STEWARD_CONTROL_H

#include <stddef.h>

#include "supervisor.h"

typedef struct sw_control sw_control;

/* Listens on path for s. NULL with a message in err (another host listens there, the path is
 * too long or is not a socket, bind fails). */
sw_control *sw_control_open(sw_supervisor *s, const char *path, char *err, size_t errlen);
/* Closes every connection and the listener, removes the socket file (if it is still ours)
 * and frees c. Call after the loop has stopped; it runs the loop just enough to close. */
void sw_control_close(sw_control *c);
/* Removes the socket file if it is still ours, and nothing else: for an exit at once (a
 * second signal), which closes nothing. */
void sw_control_remove_file(const sw_control *c);
/* The socket path a host serves for dir (cfg_path, else DIR/.steward.sock), malloc'd. */
char *sw_control_default_path(const char *dir, const char *cfg_path);

#endif
