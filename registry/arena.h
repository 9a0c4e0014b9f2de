/* Bump allocator for one registry snapshot: every node, string and entry of a snapshot lives in
 * its arena and is freed at once with it. Not thread-safe while being filled; a finished
 * snapshot is immutable, so readers on any thread may share it. */
#ifndef STEWARD_ARENA_H
#define STEWARD_ARENA_H

#include <stddef.h>

typedef struct sw_arena_chunk sw_arena_chunk;
typedef struct sw_arena {
    sw_arena_chunk *head;
    size_t used_bytes;
} sw_arena;

void sw_arena_init(sw_arena *a);
/* Frees every allocation made from the arena. */
void sw_arena_free(sw_arena *a);
/* Zeroed, 16-byte aligned memory; aborts the process on out-of-memory (the loader's allocations
 * are small and bounded by input size, and a half-built snapshot has no useful recovery). */
void *sw_arena_alloc(sw_arena *a, size_t size);
char *sw_arena_strndup(sw_arena *a, const char *s, size_t len);
/* Moves every allocation of src into dst (freed with dst); src is left empty. */
void sw_arena_adopt(sw_arena *dst, sw_arena *src);
char *sw_arena_strdup(sw_arena *a, const char *s);
/* printf into arena memory. */
char *sw_arena_printf(sw_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
