/* One log record formatted as one line: for the log (log.c), and for `steward logs`, which
 * writes the records it reads back as text. */
#ifndef STEWARD_LOG_FORMAT_H
#define STEWARD_LOG_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"

#define LOG_STACK_BUF 4096

/* A line being built: in its own stack array, moved to the heap for large records. */
typedef struct lbuf {
    char *p;
    size_t len, cap;
    bool heap;
    bool cut;    /* a piece did not fit: the record is being truncated */
    bool marked; /* the "…" of the cut is written */
    char stack[LOG_STACK_BUF];
} lbuf;

/* How a record is written: JSON (its ts in UTC with the date), or text with ANSI colours when
 * `color` and the local date before the time when `date`; at the wall time wall_ns (ns since
 * the epoch, sw_log_wall_ns). */
typedef struct sw_log_style {
    bool json, color, date;
    int64_t wall_ns;
} sw_log_style;

/* Formats the record into b, ended by a newline; b->len is 0 when nothing could be made. Free
 * with sw_log_line_free. */
void sw_log_format(lbuf *b, const sw_log_style *st, sw_log_level level, const char *service,
                   const char *msg, const sw_log_field *fields, size_t n_fields);
/* The wall clock (sw_wall_now) in ns since the epoch. */
int64_t sw_log_wall_ns(void);
void sw_log_line_free(lbuf *b);

#endif
