/* Durations and sizes as the registry writes them: "250ms", "1.5s", "2m", "1h" or a number of
 * seconds; "64KB", "32MB", "1GB" or a number of bytes (KB = 1024 bytes). Strict: no spaces,
 * no negative values, no unknown units. An explicit 0 is zero. */
#ifndef STEWARD_UNITS_H
#define STEWARD_UNITS_H

#include <stdint.h>

#define SW_NS_PER_MS INT64_C(1000000)
#define SW_NS_PER_S  INT64_C(1000000000)

/* `infinity`, where a field allows it (lifecycle.stop_timeout): never times out. */
#define SW_DURATION_INFINITE INT64_MAX

/* Parse text into nanoseconds. 0 on success, -1 if malformed or out of range. */
int sw_parse_duration(const char *text, int64_t *out_ns);
/* Durations as time.parse_duration reads them (docs/lua-api.md): a duration above, or several
 * number-and-unit terms in a row ("1m30s", "1h2m3.5s"; each term has a unit). 0 or -1. */
int sw_parse_duration_terms(const char *text, int64_t *out_ns);
/* Seconds given as a YAML number. */
int sw_duration_from_seconds(double seconds, int64_t *out_ns);
#define SW_UNITS_FRACTION (-2)

/* Parse text into bytes. 0 on success, SW_UNITS_FRACTION if it is not a whole number of bytes
 * ("1.5B"), -1 if malformed or out of range. */
int sw_parse_size(const char *text, uint64_t *out_bytes);
/* Shortest natural rendering: "250ms", "1.5s", "2m" (for messages and status). */
void sw_format_duration(int64_t ns, char *buf, unsigned size);

#endif
