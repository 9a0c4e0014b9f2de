/* The log stream (docs/operating.md): text lines by default, JSON lines with --log-format
 * json, on one FILE (stderr). Thread-safe: each record is formatted in a local buffer and
 * written with one call under a lock, so lines from different threads never interleave. */
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

/* json: JSON lines; color: ANSI colours in text mode (the caller decides: TTY and no NO_COLOR). */
sw_log *sw_log_new(FILE *out, bool json, sw_log_level min_level, bool color);
void sw_log_free(sw_log *log);
bool sw_log_enabled(const sw_log *log, sw_log_level level);
/* `service` may be NULL. Never fails visibly: a record that cannot be written is dropped. */
void sw_log_write(sw_log *log, sw_log_level level, const char *service, const char *msg,
                  const sw_log_field *fields, size_t n_fields);
/* "debug", "info", "warn"/"warning", "error" -> level; -1 if unknown. */
int sw_log_level_parse(const char *name);

#endif
