/* A log record in the compact form the rings keep (log_ring.h): its level, message and fields
 * copied as they are (strings with their NUL, numbers as bytes, a JSON field as its compact
 * text), with no formatting on the logging thread; the JSON line is made when the record is
 * read (log_format.h, with the record's own time). Strings are cut at SW_LOG_RECORD_MAX and
 * fields left out past it: a record that large is cut by the formatter anyway. No state. */
#ifndef STEWARD_LOG_RECORD_H
#define STEWARD_LOG_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "log_format.h"

#define SW_LOG_RECORD_MAX 65536

/* The record encoded into buf (cap bytes); its length. When cap is too small, nothing is
 * written and the length it needs is returned: call again with that much. */
size_t sw_log_record_encode(char *buf, size_t cap, sw_log_level level, const char *msg,
                            const sw_log_field *fields, size_t n_fields);
/* The encoded record p[0..n) as a JSON line into out (sw_log_line_free), with its service
 * (NULL: the host's) and wall time; out->len is 0 when p is no record. */
void sw_log_record_json(lbuf *out, const char *p, size_t n, const char *service, int64_t wall_ns);

#endif
