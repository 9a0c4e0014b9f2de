/* Per-state heap (see vm_heap.h): chunks carved by bumping a pointer, freed blocks kept on
 * singly linked lists per size class (the link lives in the free block itself). The fast
 * paths are inline in the header; here: chunks, moves between kinds and classes, release. */
#include "vm_heap.h"

#include <string.h>

/* Sized so that header + payload + malloc's own header stay within 16 KB: a fresh idle
 * process (~14 KB of small objects) fits its first chunk. */
#define FIRST_CHUNK_DEFAULT (16 * 1024 - 64)
#define CHUNK_MAX (64 * 1024)

struct sw_heap_chunk {
    sw_heap_chunk *next;
    size_t size; /* payload bytes after this header */
};

/* The header is a multiple of the grain, so blocks carved after it stay aligned. */
#define HEADER_SIZE ((sizeof(sw_heap_chunk) + SW_HEAP_GRAIN - 1) / SW_HEAP_GRAIN * SW_HEAP_GRAIN)

static size_t round_grain(size_t n) { return (n + SW_HEAP_GRAIN - 1) / SW_HEAP_GRAIN * SW_HEAP_GRAIN; }
static size_t class_of(size_t n) { return (n - 1) / SW_HEAP_GRAIN; }
static int is_small(size_t n) { return n <= SW_HEAP_SMALL_MAX; }

void sw_heap_init(sw_heap *h, size_t first_chunk)
{
    memset(h, 0, sizeof *h);
    h->next_chunk = first_chunk ? round_grain(first_chunk) : FIRST_CHUNK_DEFAULT;
    if (h->next_chunk < SW_HEAP_SMALL_MAX)
        h->next_chunk = SW_HEAP_SMALL_MAX;
}

/* A new chunk becomes the bump region; what was left of the old one (less than the block
 * that did not fit, so a small size) goes to its free list. */
static int new_chunk(sw_heap *h)
{
    size_t size = h->next_chunk;
    sw_heap_chunk *ch = malloc(HEADER_SIZE + size);
    if (!ch)
        return -1;
    size_t left = (size_t)(h->end - h->cur);
    if (left >= SW_HEAP_GRAIN) {
        SW_HEAP_UNPOISON(h->cur, left);
        sw_heap_free(h, h->cur, left);
    }
    ch->next = h->chunks;
    ch->size = size;
    h->chunks = ch;
    h->cur = (char *)ch + HEADER_SIZE;
    h->end = h->cur + size;
    SW_HEAP_POISON(h->cur, size);
    if (h->next_chunk < CHUNK_MAX)
        h->next_chunk *= 2;
    return 0;
}

void *sw_heap_alloc_slow(sw_heap *h, size_t n)
{
    return new_chunk(h) == 0 ? sw_heap_alloc(h, n) : NULL;
}

/* Moves a block to a new one of another kind or class. */
static void *move_block(sw_heap *h, void *p, size_t osize, size_t nsize)
{
    void *q = sw_heap_alloc(h, nsize);
    if (!q)
        return NULL;
    memcpy(q, p, osize < nsize ? osize : nsize);
    sw_heap_free(h, p, osize);
    return q;
}

void *sw_heap_realloc(sw_heap *h, void *p, size_t osize, size_t nsize)
{
    if (!is_small(osize) && !is_small(nsize))
        return realloc(p, nsize);
    if (is_small(osize) && is_small(nsize)) {
        if (class_of(osize) == class_of(nsize)) {
            SW_HEAP_UNPOISON(p, nsize);
            return p;
        }
        void *q = move_block(h, p, osize, nsize);
        /* A shrink never fails: without memory for the smaller block this one serves (freed
         * later with its new size, it joins a smaller class and its tail goes unused). */
        return q || nsize > osize ? q : p;
    }
    return move_block(h, p, osize, nsize);
}

void sw_heap_closing(sw_heap *h) { h->closing = 1; }

void sw_heap_release(sw_heap *h)
{
    sw_heap_chunk *ch = h->chunks;
    while (ch) {
        sw_heap_chunk *next = ch->next;
        SW_HEAP_UNPOISON((char *)ch + HEADER_SIZE, ch->size);
        free(ch);
        ch = next;
    }
    memset(h, 0, sizeof *h);
}

size_t sw_heap_footprint(const sw_heap *h)
{
    size_t n = 0;
    for (const sw_heap_chunk *ch = h->chunks; ch; ch = ch->next)
        n += HEADER_SIZE + ch->size;
    return n;
}
