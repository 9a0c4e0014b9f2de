/* Wall-clock time as text, in UTC (docs/lua-api.md, time.format and time.parse): RFC 3339 and
 * a strftime-style subset, with calendar arithmetic of its own (proleptic Gregorian), so
 * neither the time zone database, the TZ variable nor the locale plays any part. Times are
 * Unix seconds as a double, kept to the microsecond. Pure functions; any thread. */
#ifndef STEWARD_TIMEFMT_H
#define STEWARD_TIMEFMT_H

#include <stddef.h>

#define SW_TIME_MIN        (-62135596800.0) /* 0001-01-01T00:00:00Z */
#define SW_TIME_MAX        253402300800.0   /* 10000-01-01T00:00:00Z: the first time out of range */
#define SW_TIMEFMT_MAX_OUT 256 /* the longest text sw_time_format writes, NUL included */

/* The wall clock (CLOCK_REALTIME): Unix seconds with the fraction. */
double sw_wall_now(void);

/* Writes t as fmt says into out (SW_TIMEFMT_MAX_OUT bytes). fmt "rfc3339" (or NULL):
 * 2006-01-02T15:04:05Z, with the microseconds after a "." when there are any (trailing zeros
 * dropped). Else the directives of docs/lua-api.md. 0; -1 with a message in err when t is out
 * of range or not finite; -2 when fmt is wrong (an unknown directive, a result longer than the
 * buffer). */
int sw_time_format(double t, const char *fmt, char *out, char *err, size_t errlen);

/* Reads s as fmt says (NULL: "rfc3339", which also takes "t" or a space between date and time
 * and "z" for Z) into *t. 0; -1 with a message in err when s does not match (the byte where it
 * stops matching, and why); -2 with a message when fmt itself is wrong (an unknown
 * directive). */
int sw_time_parse(const char *s, const char *fmt, double *t, char *err, size_t errlen);

#endif
