/* Per-state heap (see vm_heap.h): chunks carved by bumping a pointer, freed blocks kept on
 * singly linked lists per size class (the link lives in the free block itself). The fast
 * paths are inline in the header; here: regions and chunks, large blocks, moves between kinds
 * and classes, release. */
#include "vm_heap.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_MAX   (64 * 1024)
#define LATER_CHUNK (8 * 1024) /* chunks after the first: a fresh state rarely needs one */

struct sw_heap_chunk {
    sw_heap_chunk *next;
    size_t size;   /* payload bytes after this header */
    int in_region; /* a region slot, else malloc'd */
};

/* The header is a multiple of the grain, so blocks carved after it stay aligned. */
#define HEADER_SIZE ((sizeof(sw_heap_chunk) + SW_HEAP_GRAIN - 1) / SW_HEAP_GRAIN * SW_HEAP_GRAIN)

/* ---- regions: 2 MB, 2 MB-aligned, cut into slots for first chunks ---- */

#define REGION_SIZE ((size_t)2 << 20)
/* A fresh idle process (its builtins not yet opened) uses ~15.5 KB: LuaJIT's global state
 * (6 KB), string table and stacks, its code and tasks. One slot, with a little room to
 * spare; a process that needs more goes on in malloc'd chunks. */
#define SLOT_SIZE   ((size_t)16 * 1024)
#define REGION_HEAD 64
#define SLOTS       ((REGION_SIZE - REGION_HEAD) / SLOT_SIZE)

typedef struct region {
    struct region *next, *prev; /* regions with a free slot */
    void *free_slots;           /* linked through their first word */
    size_t used, carved;        /* slots handed out; slots ever handed out (bump) */
} region;

static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static region *with_room; /* regions with a free slot */
static region *spare;     /* an empty region kept for the next burst of spawns */

static region *region_map(void)
{
    /* Twice the size, then trimmed to an aligned region: huge pages need the alignment, and
     * a slot finds its region by masking its address. */
    char *raw =
        mmap(NULL, 2 * REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *r = (char *)(((uintptr_t)raw + REGION_SIZE - 1) & ~(uintptr_t)(REGION_SIZE - 1));
    if (r > raw) munmap(raw, (size_t)(r - raw));
    if (r + REGION_SIZE < raw + 2 * REGION_SIZE)
        munmap(r + REGION_SIZE, (size_t)(raw + 2 * REGION_SIZE - (r + REGION_SIZE)));
#ifdef MADV_HUGEPAGE
    madvise(r, REGION_SIZE, MADV_HUGEPAGE); /* a hint: without huge pages it works as before */
#endif
    region *g = (region *)r;
    memset(g, 0, sizeof *g);
    return g;
}

static void link_room(region *g)
{
    g->prev = NULL;
    g->next = with_room;
    if (with_room) with_room->prev = g;
    with_room = g;
}

static void unlink_room(region *g)
{
    if (g->prev) g->prev->next = g->next;
    else with_room = g->next;
    if (g->next) g->next->prev = g->prev;
    g->next = g->prev = NULL;
}

/* ---- the next region, mapped and faulted in ahead on a thread of its own ----
 * A fresh region costs the kernel 2 MB of zeroed memory at first touch: at 100,000 spawns
 * that was half the spawning thread's time. A region is made ahead, off the spawning thread
 * (on another core when one is free), whenever the last one made ahead is taken: at most one
 * region (2 MB) is resident ahead of need. */

static pthread_cond_t ahead_cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t ahead_once = PTHREAD_ONCE_INIT;
static region *ahead;      /* ready for the next region a spawn needs; under regions_lock */
static bool ahead_wanted;  /* under regions_lock */
static bool ahead_running; /* its thread runs (set once, before any use) */

static void fault_in(region *g)
{
    for (size_t off = 0; off < REGION_SIZE; off += 4096) ((volatile char *)g)[off] = 0;
}

static void *ahead_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&regions_lock);
    for (;;) {
        while (!ahead_wanted) pthread_cond_wait(&ahead_cond, &regions_lock);
        ahead_wanted = false;
        pthread_mutex_unlock(&regions_lock);
        region *g = region_map();
        if (g) fault_in(g);
        pthread_mutex_lock(&regions_lock);
        ahead = g; /* NULL when mapping failed: the spawn maps its own, and asks again */
    }
    return NULL;
}

static void ahead_start(void)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    ahead_running = pthread_create(&t, &attr, ahead_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

/* A new region for slot_get (regions_lock held): the one made ahead, else one mapped here;
 * either way the next is asked for. */
static region *region_next(void)
{
    pthread_once(&ahead_once, ahead_start);
    region *g = ahead;
    ahead = NULL;
    if (ahead_running) {
        ahead_wanted = true;
        pthread_cond_signal(&ahead_cond);
    }
    return g ? g : region_map();
}

static void *slot_get(void)
{
    pthread_mutex_lock(&regions_lock);
    region *g = with_room;
    if (!g) {
        g = spare ? spare : region_next();
        spare = NULL;
        if (g) link_room(g);
    }
    void *slot = NULL;
    if (g) {
        if (g->free_slots) {
            slot = g->free_slots;
            g->free_slots = *(void **)slot;
        } else {
            slot = (char *)g + REGION_HEAD + g->carved++ * SLOT_SIZE;
        }
        if (++g->used == SLOTS) unlink_room(g);
    }
    pthread_mutex_unlock(&regions_lock);
    return slot;
}

static void slot_put(void *slot)
{
    region *g = (region *)((uintptr_t)slot & ~(uintptr_t)(REGION_SIZE - 1));
    SW_HEAP_UNPOISON(slot, SLOT_SIZE);
    pthread_mutex_lock(&regions_lock);
    if (g->used-- == SLOTS) link_room(g);
    *(void **)slot = g->free_slots;
    g->free_slots = slot;
    region *unmap = NULL;
    if (g->used == 0) {
        unlink_room(g);
        if (spare) unmap = g;
        else spare = g;
    }
    pthread_mutex_unlock(&regions_lock);
    if (unmap) munmap(unmap, REGION_SIZE);
}

/* ---- chunks ---- */

static size_t round_grain(size_t n)
{
    return (n + SW_HEAP_GRAIN - 1) / SW_HEAP_GRAIN * SW_HEAP_GRAIN;
}
static size_t class_of(size_t n) { return (n - 1) / SW_HEAP_GRAIN; }
static int is_small(size_t n) { return n <= SW_HEAP_SMALL_MAX; }

void sw_heap_init(sw_heap *h, size_t first_chunk)
{
    memset(h, 0, sizeof *h);
    h->next_chunk = first_chunk ? round_grain(first_chunk) : 0;
    if (first_chunk && h->next_chunk < SW_HEAP_SMALL_MAX) h->next_chunk = SW_HEAP_SMALL_MAX;
}

/* The first chunk is a region slot unless a size was asked for (or no region can be had). */
static sw_heap_chunk *chunk_get(sw_heap *h)
{
    sw_heap_chunk *ch = NULL;
    if (!h->chunks && h->next_chunk == 0) {
        if ((ch = slot_get()) != NULL) {
            ch->in_region = 1;
            ch->size = SLOT_SIZE - HEADER_SIZE;
            return ch;
        }
        h->next_chunk = SLOT_SIZE - HEADER_SIZE;
    }
    if (h->chunks && h->next_chunk == 0) h->next_chunk = LATER_CHUNK;
    if ((ch = malloc(HEADER_SIZE + h->next_chunk)) == NULL) return NULL;
    ch->in_region = 0;
    ch->size = h->next_chunk;
    if (h->next_chunk < CHUNK_MAX) h->next_chunk *= 2;
    return ch;
}

/* A new chunk becomes the bump region; what was left of the old one (less than the small
 * block that did not fit, or a large one's worth) goes to the free lists. */
static int new_chunk(sw_heap *h)
{
    sw_heap_chunk *ch = chunk_get(h);
    if (!ch) return -1;
    size_t left = (size_t)(h->end - h->cur);
    while (left >= SW_HEAP_GRAIN) {
        size_t piece = left < SW_HEAP_SMALL_MAX ? left : SW_HEAP_SMALL_MAX;
        SW_HEAP_UNPOISON(h->cur, piece);
        sw_heap_free(h, h->cur, piece);
        h->cur += piece;
        left -= piece;
    }
    int first = !h->chunks;
    ch->next = h->chunks;
    h->chunks = ch;
    h->cur = (char *)ch + HEADER_SIZE;
    h->end = h->cur + ch->size;
    if (first) {
        h->first = h->cur;
        h->first_end = h->end;
    }
    SW_HEAP_POISON(h->cur, ch->size);
    return 0;
}

void *sw_heap_alloc_slow(sw_heap *h, size_t n)
{
    return new_chunk(h) == 0 ? sw_heap_alloc(h, n) : NULL;
}

void *sw_heap_alloc_large(sw_heap *h, size_t n)
{
    if (n <= SW_HEAP_CARVE_MAX && (!h->chunks || h->end == h->first_end)) {
        size_t size = round_grain(n);
        if (!h->chunks && new_chunk(h) != 0) return malloc(n);
        if ((size_t)(h->end - h->cur) >= size) {
            void *p = h->cur;
            h->cur += size;
            SW_HEAP_UNPOISON(p, n);
            return p;
        }
    }
    return malloc(n);
}

/* Moves a block to a new one of another kind or class. */
static void *move_block(sw_heap *h, void *p, size_t osize, size_t nsize)
{
    void *q = sw_heap_alloc(h, nsize);
    if (!q) return NULL;
    memcpy(q, p, osize < nsize ? osize : nsize);
    sw_heap_free(h, p, osize);
    return q;
}

void *sw_heap_realloc(sw_heap *h, void *p, size_t osize, size_t nsize)
{
    if (!is_small(osize) && !is_small(nsize) && !sw_heap_carved(h, p)) return realloc(p, nsize);
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
    void *q = move_block(h, p, osize, nsize);
    /* A carved block shrinking within the large sizes keeps its place when memory is short:
     * it is never freed on its own anyway. */
    return q || nsize > osize || is_small(nsize) || !sw_heap_carved(h, p) ? q : p;
}

void sw_heap_closing(sw_heap *h) { h->closing = 1; }

void sw_heap_release(sw_heap *h)
{
    sw_heap_chunk *ch = h->chunks;
    while (ch) {
        sw_heap_chunk *next = ch->next;
        SW_HEAP_UNPOISON((char *)ch + HEADER_SIZE, ch->size);
        if (ch->in_region) slot_put(ch);
        else free(ch);
        ch = next;
    }
    memset(h, 0, sizeof *h);
}

size_t sw_heap_footprint(const sw_heap *h)
{
    size_t n = 0;
    for (const sw_heap_chunk *ch = h->chunks; ch; ch = ch->next) n += HEADER_SIZE + ch->size;
    return n;
}
