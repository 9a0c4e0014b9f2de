/* Pid and name tables: open addressing with tombstones, one mutex. Lookups are short critical
 * sections; a grabbed process is kept alive by its reference count, not by the lock. */
#include "pidtable.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

void sw_pidtable_init(sw_pidtable *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->next_id = 1;
}

void sw_pidtable_destroy(sw_pidtable *t)
{
    for (size_t i = 0; i < t->names_cap; i++) free(t->names[i].name);
    free(t->names);
    free(t->slots);
    pthread_mutex_destroy(&t->lock);
}

static size_t hash_id(uint64_t id) { return (size_t)(id * 0x9E3779B97F4A7C15ull >> 16); }

static void rehash(sw_pidtable *t, size_t cap)
{
    struct pid_slot *old = t->slots;
    size_t old_cap = t->cap;
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots) abort();
    t->cap = cap;
    t->used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].proc) continue;
        size_t j = hash_id(old[i].id) & (cap - 1);
        while (t->slots[j].id) j = (j + 1) & (cap - 1);
        t->slots[j] = old[i];
        t->used++;
    }
    free(old);
}

uint64_t sw_pidtable_add(sw_pidtable *t, sw_proc *p)
{
    pthread_mutex_lock(&t->lock);
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = 64; /* probing masks with cap - 1: it must be a power of two */
        while (cap < t->live * 4) cap <<= 1;
        rehash(t, cap);
    }
    uint64_t id = t->next_id++;
    size_t j = hash_id(id) & (t->cap - 1);
    while (t->slots[j].id) j = (j + 1) & (t->cap - 1);
    t->slots[j].id = id;
    t->slots[j].proc = p;
    t->used++;
    t->live++;
    pthread_mutex_unlock(&t->lock);
    return id;
}

static struct pid_slot *find(sw_pidtable *t, uint64_t id)
{
    if (!t->cap || !id) return NULL;
    size_t j = hash_id(id) & (t->cap - 1);
    while (t->slots[j].id) {
        if (t->slots[j].id == id) return t->slots[j].proc ? &t->slots[j] : NULL;
        j = (j + 1) & (t->cap - 1);
    }
    return NULL;
}

void sw_pidtable_remove(sw_pidtable *t, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    struct pid_slot *s = find(t, id);
    if (s) {
        s->proc = NULL; /* tombstone: keeps later probes intact until the next rehash */
        t->live--;
    }
    pthread_mutex_unlock(&t->lock);
}

sw_proc *sw_pidtable_grab(sw_pidtable *t, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    struct pid_slot *s = find(t, id);
    sw_proc *p = s ? s->proc : NULL;
    if (p) sw_proc_retain(p);
    pthread_mutex_unlock(&t->lock);
    return p;
}

size_t sw_pidtable_live(sw_pidtable *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->live;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* ---- names: small table, linear probing by string hash ---- */

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct name_slot *name_find(sw_pidtable *t, const char *name)
{
    if (!t->names_cap) return NULL;
    size_t j = hash_str(name) & (t->names_cap - 1);
    while (t->names[j].name) {
        if (strcmp(t->names[j].name, name) == 0) return &t->names[j];
        j = (j + 1) & (t->names_cap - 1);
    }
    return NULL;
}

static void names_grow(sw_pidtable *t)
{
    struct name_slot *old = t->names;
    size_t old_cap = t->names_cap;
    t->names_cap = old_cap ? old_cap * 2 : 16;
    t->names = calloc(t->names_cap, sizeof *t->names);
    if (!t->names) abort();
    t->names_used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].name) continue;
        if (!old[i].id) { free(old[i].name); continue; } /* drop released names */
        size_t j = hash_str(old[i].name) & (t->names_cap - 1);
        while (t->names[j].name) j = (j + 1) & (t->names_cap - 1);
        t->names[j] = old[i];
        t->names_used++;
    }
    free(old);
}

int sw_pidtable_register(sw_pidtable *t, const char *name, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    int rc = 0;
    struct name_slot *s = name_find(t, name);
    if (!find(t, id)) rc = -2;
    else if (s && s->id && find(t, s->id)) rc = -1;
    else if (s) s->id = id;
    else {
        if ((t->names_used + 1) * 2 > t->names_cap) names_grow(t);
        size_t j = hash_str(name) & (t->names_cap - 1);
        while (t->names[j].name) j = (j + 1) & (t->names_cap - 1);
        t->names[j].name = strdup(name);
        t->names[j].id = id;
        t->names_used++;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

uint64_t sw_pidtable_lookup(sw_pidtable *t, const char *name)
{
    pthread_mutex_lock(&t->lock);
    struct name_slot *s = name_find(t, name);
    uint64_t id = s && s->id && find(t, s->id) ? s->id : 0;
    pthread_mutex_unlock(&t->lock);
    return id;
}

int sw_pidtable_unregister(sw_pidtable *t, const char *name, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    struct name_slot *s = name_find(t, name);
    int rc = -1;
    if (s && s->id && !find(t, s->id)) s->id = 0; /* released already: its holder ended */
    else if (s && s->id && (id == 0 || s->id == id)) {
        s->id = 0; /* the slot keeps its name as a tombstone until the table grows */
        rc = 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* On every message's from(): hand-rolled, printf costs more than the rest of the call. */
void sw_pid_format(uint64_t id, char *buf, size_t size)
{
    char hex[17];
    int n = 0;
    do {
        hex[n++] = "0123456789abcdef"[id & 15];
        id >>= 4;
    } while (id || n < 4);
    size_t len = 7 + (size_t)n;
    if (size < len + 1) {
        if (size) buf[0] = 0;
        return;
    }
    memcpy(buf, "host|0x", 7);
    for (int i = 0; i < n; i++) buf[7 + i] = hex[n - 1 - i];
    buf[len] = 0;
}

/* Hex digits only (strtoull would also take spaces, a sign or a second "0x"); every
 * process.send parses its destination, so this stays a plain loop. */
uint64_t sw_pid_parse(const char *s)
{
    if (strncmp(s, "host|0x", 7) != 0) return 0;
    uint64_t v = 0;
    int n = 0;
    for (s += 7; *s; s++, n++) {
        int c = (unsigned char)*s, d = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (d < 0 || n == 16) return 0;
        v = v << 4 | (uint64_t)d;
    }
    return n ? v : 0;
}
