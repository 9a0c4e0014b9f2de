/* JSON in Steward's C code: Jansson is the one JSON library (values are its json_t, built
 * with its own calls: json_object, json_array, json_pack, json_integer, json_true, …). This
 * module adds what every writer and reader here needs on top of it:
 *   - values from text that may not be valid UTF-8 (each bad byte becomes U+FFFD, the rule of
 *     utf8.h), and from numbers JSON cannot hold (NaN and ±inf become null);
 *   - writing: compact, one line, keys in insertion order, integers as they are and reals
 *     with the fewest significant digits (15 to 17) that read every real of the text back
 *     exactly; control characters, '"' and '\' escaped, all else as UTF-8;
 *   - reading: strict RFC 8259 (no comments, no trailing text), valid UTF-8 only, surrogate
 *     pairs decoded, no \u0000, duplicate keys refused, nesting bounded.
 * A json_t has one owner thread at a time; the functions keep no state: any thread. */
#ifndef STEWARD_JSON_H
#define STEWARD_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* ---- values (new references; NULL only when memory runs out) ---- */

/* A string from a C string; NULL gives null. */
json_t *sw_json_str(const char *s);
/* A string from s[0..n), which may hold NUL bytes (written as \u0000); NULL gives null. */
json_t *sw_json_strn(const char *s, size_t n);
/* A number: a whole value below 2^53 in magnitude as an integer, NaN and ±inf as null, any
 * other as a real. */
json_t *sw_json_num(double d);
/* obj[key] = v, stealing v (released on failure too); key is repaired like a string value
 * (NULL is ""). A key already present keeps its place and takes the new value. 0, or -1 when
 * obj is not an object, v is NULL or memory runs out. */
int sw_json_set(json_t *obj, const char *key, json_t *v);
/* The same with key[0..n), which may hold NUL bytes. */
int sw_json_setn(json_t *obj, const char *key, size_t n, json_t *v);

/* ---- writing ---- */

/* The significant digits the reals of v need to read back exactly (15 to 17; 15 without any
 * real). Pass it to sw_json_dumpb to measure parts of a text written with the same digits. */
int sw_json_digits(const json_t *v);
/* v's text into buf[0..size), not NUL-terminated; digits 0: sw_json_digits(v). Returns the
 * length the whole text needs (as json_dumpb): the text is complete only when that is at most
 * size; buf may be NULL with size 0 to measure. 0 when v is NULL. */
size_t sw_json_dumpb(const json_t *v, char *buf, size_t size, int digits);
/* v's text, NUL-terminated and malloc'd, followed by '\n' when newline (a line of NDJSON);
 * its length (newline included) in *len unless len is NULL. NULL when v is NULL or memory
 * runs out. */
char *sw_json_dump(const json_t *v, bool newline, size_t *len);

/* ---- reading ---- */

/* text[0..len) as one JSON value of any type, nested at most max_depth arrays and objects
 * deep. A new reference, or NULL with a one-line reason in err ("duplicate object key near
 * '"cmd"' (column 23)", "nesting deeper than 64 levels"). */
json_t *sw_json_parse(const char *text, size_t len, int max_depth, char *err, size_t errlen);

#endif
