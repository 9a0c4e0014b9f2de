/* Linear probing, FNV-1a, load factor at most 1/2. */
#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void sw_strmap_init(sw_strmap *m) { memset(m, 0, sizeof *m); }

void sw_strmap_free(sw_strmap *m)
{
    free(m->keys);
    free(m->vals);
    sw_strmap_init(m);
}

static size_t slot(const sw_strmap *m, const char *key)
{
    size_t i = hash(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
    return i;
}

void *sw_strmap_get(const sw_strmap *m, const char *key)
{
    if (!m->cap) return NULL;
    size_t i = slot(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

static void grow(sw_strmap *m)
{
    sw_strmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->vals = calloc(m->cap, sizeof *m->vals);
    if (!m->keys || !m->vals) abort();
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) sw_strmap_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
}

void *sw_strmap_put(sw_strmap *m, const char *key, void *val)
{
    if ((m->n + 1) * 2 > m->cap) grow(m);
    size_t i = slot(m, key);
    if (m->keys[i]) return m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return NULL;
}
