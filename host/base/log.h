/* The log stream (docs/operating.md): text lines by default, JSON lines with --log-format
 * json, on one FILE (stderr). Thread-safe: each record is formatted on the caller's thread
 * and handed whole to the writer (log_writer.h), so lines never interleave and each thread's
 * lines keep their order. Logging never blocks on the reader of a pipe: lines wait in a
 * bounded buffer, and are dropped (then counted in a notice) when it is full. Repeated
 * failure records are summarized (log_limit.h). */
#ifndef STEWARD_LOG_H
#define STEWARD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

typedef enum { SW_LOG_DEBUG, SW_LOG_INFO, SW_LOG_WARN, SW_LOG_ERROR } sw_log_level;

typedef enum { SW_LF_STR, SW_LF_INT, SW_LF_NUM, SW_LF_BOOL, SW_LF_JSON } sw_log_ftype;

/* One key=value field. SW_LF_STR: `s` (NULL is ""). SW_LF_JSON: `j`, any JSON value (NULL is
 * null), borrowed for the call: part of the record in JSON mode, its compact text in text
 * mode. */
typedef struct sw_log_field {
    const char *key;
    sw_log_ftype type;
    const char *s;
    json_t *j;
    int64_t i;
    double d;
    bool b;
} sw_log_field;

typedef struct sw_log sw_log;

#define SW_LOG_BUFFER_BYTES     ((size_t)1 << 20)      /* 1 MiB of lines waiting for the reader */
#define SW_LOG_FLUSH_TIMEOUT_NS ((int64_t)2000000000)  /* sw_log_free waits this long at most */
#define SW_LOG_BURST            10                     /* identical records per window */
#define SW_LOG_WINDOW_NS        ((int64_t)10000000000) /* the window: 10 s */

typedef enum {
    SW_LOG_AUTO,     /* direct for a regular file or a FILE without a descriptor, else buffered */
    SW_LOG_DIRECT,   /* the caller writes its line before sw_log_write returns */
    SW_LOG_BUFFERED, /* lines go through the buffer and the writer thread */
} sw_log_mode;

typedef struct sw_log_options {
    bool json;  /* JSON lines */
    bool color; /* ANSI colours in text mode (the caller decides: TTY and no NO_COLOR) */
    sw_log_level min_level;
    sw_log_mode mode;
    size_t buffer_bytes;      /* the buffer of a buffered log (0: direct) */
    int64_t flush_timeout_ns; /* how long sw_log_free waits for a stuck reader */
    unsigned burst;           /* identical records per window; 0: no summaries */
    int64_t window_ns;
} sw_log_options;

/* What the log keeps besides stderr (docs/operating.md, Logs): per-service rings in memory
 * (log_ring.h) and, with a directory, per-service files with rotation (log_files.h). */
typedef struct sw_log_keep {
    size_t ring_lines;  /* records per service in memory; 0: no rings */
    size_t ring_bytes;  /* bytes per service in memory */
    const char *dir;    /* NULL: no files */
    uint64_t max_size;  /* a file is rotated before it would pass this; 0: the default */
    unsigned max_files; /* files per service, the current one included; 0: the default */
} sw_log_keep;

typedef struct sw_log_ring sw_log_ring;

/* The defaults above, with these settings. */
sw_log_options sw_log_defaults(bool json, sw_log_level min_level, bool color);
/* A log on out (NULL: stderr); NULL when memory runs out. Starts the writer thread. */
sw_log *sw_log_open(FILE *out, const sw_log_options *o);
/* sw_log_open with sw_log_defaults(json, min_level, color). */
sw_log *sw_log_new(FILE *out, bool json, sw_log_level min_level, bool color);
/* Starts keeping records as k says. Call before any other thread logs. 0, or -1 with a
 * message in err (the directory is unusable, memory ran out). */
int sw_log_start_keeping(sw_log *log, const sw_log_keep *k, char *err, size_t errlen);
/* The rings of the log (NULL: none are kept), for `steward logs`. */
sw_log_ring *sw_log_rings(const sw_log *log);
/* Writes the pending summaries and what is buffered, waiting at most the flush timeout for a
 * stuck reader, and frees the log. No other thread may log any more. */
void sw_log_free(sw_log *log);
/* Writes the pending summaries now (their windows close early), then waits until every line
 * logged so far is written (or dropped), at most timeout_ns; false on timeout. For a caller
 * about to write to stderr itself or to exit without sw_log_free. Any thread. */
bool sw_log_flush(sw_log *log, int64_t timeout_ns);
bool sw_log_enabled(const sw_log *log, sw_log_level level);
/* `service` may be NULL. Never fails visibly and never blocks on the reader: a record that
 * cannot be written is dropped (and counted in a "N log lines dropped" notice). */
void sw_log_write(sw_log *log, sw_log_level level, const char *service, const char *msg,
                  const sw_log_field *fields, size_t n_fields);
/* "debug", "info", "warn"/"warning", "error" -> level; -1 if unknown. */
int sw_log_level_parse(const char *name);
/* Lines the log lost since it opened (its buffer was full or a write failed): the count its
 * "N log lines dropped" notices add up to. Any thread. */
uint64_t sw_log_dropped(sw_log *log);

#endif
