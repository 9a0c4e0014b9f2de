/* Open-addressing hash map from NUL-terminated strings to pointers. Keys are borrowed (the
 * caller keeps them alive, e.g. in an arena). Single-threaded while being filled. */
#ifndef STEWARD_STRMAP_H
#define STEWARD_STRMAP_H

#include <stddef.h>

typedef struct sw_strmap {
    const char **keys;
    void **vals;
    size_t cap, n;
} sw_strmap;

void sw_strmap_init(sw_strmap *m);
void sw_strmap_free(sw_strmap *m);
/* The value for key, or NULL. */
void *sw_strmap_get(const sw_strmap *m, const char *key);
/* Inserts when absent and returns NULL; when present, leaves the map unchanged and returns the
 * existing value. Aborts on out-of-memory. */
void *sw_strmap_put(sw_strmap *m, const char *key, void *val);

#endif
