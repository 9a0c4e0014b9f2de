/* Bump allocator: large chunks, never freed one by one. */
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64 * 1024)

struct sw_arena_chunk {
    sw_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void sw_arena_init(sw_arena *a)
{
    a->head = NULL;
    a->used_bytes = 0;
}

void sw_arena_free(sw_arena *a)
{
    sw_arena_chunk *c = a->head;
    while (c) {
        sw_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_bytes = 0;
}

static sw_arena_chunk *chunk_new(size_t min)
{
    size_t size = min > CHUNK_SIZE ? min : CHUNK_SIZE;
    sw_arena_chunk *c = malloc(sizeof *c + size);
    if (!c) {
        fputs("steward: out of memory\n", stderr);
        abort();
    }
    c->size = size;
    c->used = 0;
    return c;
}

void *sw_arena_alloc(sw_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    sw_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        sw_arena_chunk *n = chunk_new(size);
        if (c && size > CHUNK_SIZE / 4) {
            /* A big block gets its own chunk behind the current one, so the current chunk's
             * free space is not wasted. */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            a->head = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used_bytes += size;
    memset(p, 0, size);
    return p;
}

void sw_arena_adopt(sw_arena *dst, sw_arena *src)
{
    if (!src->head) return;
    sw_arena_chunk *tail = src->head;
    while (tail->next) tail = tail->next;
    if (dst->head) { /* behind dst's current chunk, which keeps taking new allocations */
        tail->next = dst->head->next;
        dst->head->next = src->head;
    } else {
        dst->head = src->head;
    }
    dst->used_bytes += src->used_bytes;
    src->head = NULL;
    src->used_bytes = 0;
}

char *sw_arena_strndup(sw_arena *a, const char *s, size_t len)
{
    char *p = sw_arena_alloc(a, len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    return p;
}

char *sw_arena_strdup(sw_arena *a, const char *s) { return sw_arena_strndup(a, s, strlen(s)); }

char *sw_arena_printf(sw_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = sw_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
