/* One log record formatted as one line, for the log (log.c) and nothing else. */
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

/* Formats the record into b (text, or JSON when json; ANSI colours in text when color), ended
 * by a newline; b->len is 0 when nothing could be made. Free with sw_log_line_free. */
void sw_log_format(lbuf *b, bool json, bool color, sw_log_level level, const char *service,
                   const char *msg, const sw_log_field *fields, size_t n_fields);
void sw_log_line_free(lbuf *b);

#endif
