/* A per-state heap for a LuaJIT state's small objects: bump allocation from chunks plus one
 * free list per 8-byte size class, and no header per block (Lua passes the old size on every
 * free and realloc). Large blocks pass through to malloc, except that blocks up to
 * SW_HEAP_CARVE_MAX are carved from the first chunk while it has room (a new state's global
 * state, string table and stacks), so a fresh state lives in one chunk. A freed carved block stays unused
 * until the state closes (at most one chunk's worth). Closing a state frees its chunks in one
 * go. Not thread-safe: one thread at a time, as for the state it serves.
 *
 * First chunks come from 2 MB regions the kernel may back with transparent huge pages: a new
 * process then costs no page faults for most of its memory (4 KB faults were a third of what
 * spawning cost). Regions are shared by all states under one mutex (one lock per state
 * created or closed) and unmapped when empty, but for one kept for the next spawn.
 *
 * Trade-off: a freed small block is reused only by a block of the same size class, and
 * chunks go back to malloc only at sw_heap_release, so a state holds at most the sum of its
 * per-class peaks (the memory limit counts requested bytes, as before). Under AddressSanitizer
 * free blocks and unused chunk space are poisoned, so stray accesses are still caught. */
#ifndef STEWARD_VM_HEAP_H
#define STEWARD_VM_HEAP_H

#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SW_HEAP_POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define SW_HEAP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SW_HEAP_POISON(p, n)   ((void)(p), (void)(n))
#define SW_HEAP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SW_HEAP_GRAIN     8   /* LuaJIT's own allocator aligns to 8 bytes too */
#define SW_HEAP_SMALL_MAX 256 /* larger blocks come from malloc */
#define SW_HEAP_CLASSES   (SW_HEAP_SMALL_MAX / SW_HEAP_GRAIN)
#define SW_HEAP_CARVE_MAX 8192 /* larger blocks carved from the first chunk, up to this */

typedef struct sw_heap_chunk sw_heap_chunk;

typedef struct sw_heap {
    char *cur, *end;         /* unused space of the newest chunk */
    char *first, *first_end; /* the first chunk's payload: where large blocks are carved */
    int closing;             /* frees of small blocks are no-ops: chunks go all at once */
    size_t next_chunk;       /* size of the next chunk to get */
    sw_heap_chunk *chunks;
    void *free[SW_HEAP_CLASSES]; /* free blocks of class i: sizes i*8+1 .. (i+1)*8 */
} sw_heap;

/* An empty heap whose first chunk holds first_chunk bytes (rounded to the grain; 0: a
 * region slot, sized for a fresh process). Allocates nothing yet. */
void sw_heap_init(sw_heap *h, size_t first_chunk);

/* A block of n > 0 bytes, or NULL when malloc fails. */
static inline void *sw_heap_alloc(sw_heap *h, size_t n);
/* Frees block p of n bytes (n: the size it was allocated or last reallocated with). */
static inline void sw_heap_free(sw_heap *h, void *p, size_t n);

/* Resizes block p of osize bytes to nsize > 0 bytes, keeping its contents up to the smaller
 * size. NULL (p untouched) when malloc fails; shrinking within the small sizes never fails. */
void *sw_heap_realloc(sw_heap *h, void *p, size_t osize, size_t nsize);

/* From now on frees of small blocks do nothing (the state is closing). */
void sw_heap_closing(sw_heap *h);

/* Frees every chunk. Large blocks must have been freed by then (lua_close does). */
void sw_heap_release(sw_heap *h);

/* Bytes in chunks (what the heap holds from malloc, used or not), for tests and benches. */
size_t sw_heap_footprint(const sw_heap *h);

/* ---- inline fast paths: every Lua allocation goes through them ---- */

void *sw_heap_alloc_slow(sw_heap *h, size_t n);  /* a new chunk first */
void *sw_heap_alloc_large(sw_heap *h, size_t n); /* carved or malloc'd */

static inline int sw_heap_carved(const sw_heap *h, const void *p)
{
    return (const char *)p >= h->first && (const char *)p < h->first_end;
}

static inline void *sw_heap_alloc(sw_heap *h, size_t n)
{
    if (n > SW_HEAP_SMALL_MAX) return sw_heap_alloc_large(h, n);
    size_t c = (n - 1) / SW_HEAP_GRAIN, size = (c + 1) * SW_HEAP_GRAIN;
    void *p = h->free[c];
    if (p) {
        SW_HEAP_UNPOISON(p, sizeof(void *));
        h->free[c] = *(void **)p;
    } else if ((size_t)(h->end - h->cur) >= size) {
        p = h->cur;
        h->cur += size;
    } else {
        return sw_heap_alloc_slow(h, n);
    }
    SW_HEAP_UNPOISON(p, n);
    return p;
}

static inline void sw_heap_free(sw_heap *h, void *p, size_t n)
{
    if (n > SW_HEAP_SMALL_MAX) {
        if (!sw_heap_carved(h, p)) free(p);
    } else if (!h->closing) {
        size_t c = (n - 1) / SW_HEAP_GRAIN;
        SW_HEAP_UNPOISON(p, sizeof(void *)); /* a block under 8 bytes was unpoisoned only so far */
        *(void **)p = h->free[c];
        SW_HEAP_POISON(p, (c + 1) * SW_HEAP_GRAIN);
        h->free[c] = p;
    }
}

#endif
