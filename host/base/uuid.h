/* UUIDs (RFC 9562) from the OS's random source (random.h): version 4 (random) and version 7
 * (time-ordered: Unix milliseconds first). Any thread. */
#ifndef STEWARD_UUID_H
#define STEWARD_UUID_H

#include <stdint.h>

#define SW_UUID_TEXT 37 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and its NUL */

/* A version 4 UUID. 0, or -1 if the OS's random source cannot be read. */
int sw_uuid_v4(uint8_t out[16]);
/* A version 7 UUID: 48 bits of Unix milliseconds, then 12 bits of sub-millisecond time
 * (RFC 9562 section 6.2, method 3), then 62 random bits. Strictly increasing within the host:
 * a clock that has not moved (or went back) gives the last value plus one. 0 or -1. */
int sw_uuid_v7(uint8_t out[16]);
/* Lowercase text with hyphens, into out (SW_UUID_TEXT bytes). */
void sw_uuid_text(const uint8_t u[16], char out[SW_UUID_TEXT]);

#endif
