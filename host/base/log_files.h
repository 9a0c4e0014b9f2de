/* Per-service log files (docs/operating.md, Logs): with log.dir set, every record also goes to
 * DIR/<service>.log (the id's ':' written as '@') and the host's own records to DIR/host.log,
 * in the host's log format with the date. A file that a line would take past max_size is
 * rotated first: NAME.log -> NAME.log.1 -> ... -> NAME.log.<max_files-1>, the oldest removed,
 * so a service has at most max_files files. The logging thread queues each line whole; a
 * writer thread of the files' own (log_writer.h with a sink) writes them: a slow disk never
 * blocks a worker, and a stuck reader of stderr never holds the files back (nor the reverse).
 * Lines that cannot be queued or written are dropped and told in host.log. Any thread. */
#ifndef STEWARD_LOG_FILES_H
#define STEWARD_LOG_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_writer.h"

#define SW_LOG_FILES_MAX_SIZE  ((uint64_t)10 << 20) /* log.max_size */
#define SW_LOG_FILES_MAX_FILES 5                    /* log.max_files */
#define SW_LOG_FILES_BUFFER    ((size_t)4 << 20)    /* lines waiting for the disk */
#define SW_LOG_FILES_OPEN      64 /* descriptors kept open; the least recently used closes */

typedef struct sw_log_files sw_log_files;

/* Makes dir (mode 0750) unless it exists; the files there are opened as lines come. notice
 * writes the "N log lines dropped" line (log_writer.h). NULL with a message in err when dir
 * is no writable directory or memory runs out. */
sw_log_files *sw_log_files_open(const char *dir, uint64_t max_size, unsigned max_files,
                                sw_log_notice_fn notice, void *notice_arg, char *err,
                                size_t errlen);
/* Queues one line (n bytes, '\n' included) for the file of service (NULL: host.log). */
void sw_log_files_put(sw_log_files *f, const char *service, const char *line, size_t n);
/* Waits until what was queued is written, at most timeout_ns; false on timeout. */
bool sw_log_files_flush(sw_log_files *f, int64_t timeout_ns);
/* Writes what is queued (at most timeout_ns) and closes every file. */
void sw_log_files_free(sw_log_files *f, int64_t timeout_ns);
/* The file name of service's log ("app@db.log"; "host.log" for NULL) into out; its length,
 * 0 when it does not fit. */
size_t sw_log_file_name(const char *service, char *out, size_t size);

#endif
