/* UTF-8 as Steward writes it: which bytes start a valid sequence, and text made valid by
 * turning each byte that starts none into U+FFFD. The one rule behind the JSON module
 * (json.h: Jansson takes valid UTF-8 only) and the text log lines (log.c). Pure: any thread. */
#ifndef STEWARD_UTF8_H
#define STEWARD_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define SW_UTF8_REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

/* Length (1..4) of the valid UTF-8 sequence at s[0..n) with its code point in *cp, or 0 when
 * s[0] starts none: a stray continuation byte, an overlong form, a surrogate, a code point
 * over U+10FFFF or a sequence cut short. n must be at least 1. */
size_t sw_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp);
/* How many bytes of s[0..n) are valid UTF-8 before the first byte that starts no sequence:
 * n when all are. NUL bytes are valid (U+0000). */
size_t sw_utf8_valid(const char *s, size_t n);
/* s[0..n) with every byte that starts no valid sequence replaced by U+FFFD (so one bad byte
 * is one U+FFFD), NUL-terminated, malloc'd, its length in *len. NULL when memory runs out. */
char *sw_utf8_fix(const char *s, size_t n, size_t *len);

#endif
