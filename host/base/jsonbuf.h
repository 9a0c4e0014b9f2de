/* A growable text buffer that writes JSON: strings escaped so the result is valid JSON and
 * valid YAML 1.2 (the control protocol is read back with libyaml), numbers, literals. Used for
 * the control socket's replies. Not thread-safe; one owner. */
#ifndef STEWARD_JSONBUF_H
#define STEWARD_JSONBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_jbuf {
    char *p;
    size_t len, cap;
    bool oom; /* an allocation failed: the text is incomplete, do not send it */
} sw_jbuf;

void sw_jbuf_init(sw_jbuf *b);
void sw_jbuf_free(sw_jbuf *b);
/* Raw text, copied as is. */
void sw_jbuf_raw(sw_jbuf *b, const char *s, size_t n);
void sw_jbuf_lit(sw_jbuf *b, const char *s);
/* A JSON string; NULL writes null. Invalid UTF-8 becomes U+FFFD; control characters, DEL,
 * C1 controls and the non-characters U+FFFE/U+FFFF are written as \u escapes. */
void sw_jbuf_str(sw_jbuf *b, const char *s);
void sw_jbuf_int(sw_jbuf *b, int64_t v);
/* A finite number (shortest %g that reads back); NaN and infinities as null. */
void sw_jbuf_num(sw_jbuf *b, double v);
/* `"key":` after a comma unless first. */
void sw_jbuf_key(sw_jbuf *b, const char *key, bool first);

#endif
