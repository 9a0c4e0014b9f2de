/* Summaries of repeated records (docs/operating.md, Logs): at most `burst` identical records
 * per `window` get through; the rest are counted and told in one summary record when the
 * window ends (or earlier: when the same service, message and level come with another
 * identity, or when the slot is needed for another record). Identical means the same level,
 * service, message, and values of the fields `reason` and `error` (absent counts as a value);
 * every other field is ignored. Warn and error records are always counted; debug and info
 * records of a service only while one of its warn or error records is being suppressed (a
 * failure storm: a crash loop's state changes), so normal output and transitions of
 * services whose failures differ are never summarized. Pure bookkeeping: the caller gives the
 * time and writes the summaries. Any thread (one lock). */
#ifndef STEWARD_LOG_LIMIT_H
#define STEWARD_LOG_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"

typedef struct sw_log_limit sw_log_limit;

/* What a summary tells: `suppressed` records like this one were left out. The strings are
 * owned by the summary (sw_log_summary_clear); reason and error are NULL when the records had
 * no such field, else the value's text (JSON text for a JSON value), cut at 1 KB. */
typedef struct sw_log_summary {
    sw_log_level level;
    char *service, *msg, *reason, *error;
    uint64_t suppressed;
} sw_log_summary;

void sw_log_summary_clear(sw_log_summary *s);

/* NULL when memory runs out. burst >= 1, window_ns > 0. */
sw_log_limit *sw_log_limit_new(unsigned burst, int64_t window_ns);
void sw_log_limit_free(sw_log_limit *l);

/* True when a record at this level cannot be suppressed now (info or debug with no storm
 * going on): no need to ask sw_log_limit_check. Lock-free. */
bool sw_log_limit_exempt(sw_log_limit *l, sw_log_level level);

/* The verdict on one record at now_ns (CLOCK_MONOTONIC): true when it is to be written.
 * `before` (room for 2) receives the summaries to write ahead of it, *n_before their count
 * (written even when the record itself is suppressed). *wake_ns: a deadline at which
 * sw_log_limit_expire has a summary to give, when this call made a new one; else 0. */
bool sw_log_limit_check(sw_log_limit *l, int64_t now_ns, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields,
                        sw_log_summary before[2], size_t *n_before, int64_t *wake_ns);

/* Gives emit() each summary whose window ended by now_ns (all of them when `all`), in no
 * particular order, without the lock held; the summary is cleared after the call. Returns
 * the next deadline, 0 for none. */
int64_t sw_log_limit_expire(sw_log_limit *l, int64_t now_ns, bool all,
                            void (*emit)(void *arg, const sw_log_summary *s), void *arg);

#endif
