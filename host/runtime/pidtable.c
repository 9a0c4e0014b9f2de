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
        t->deaths++;
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

size_t sw_pidtable_grab_matching(sw_pidtable *t, bool (*match)(const sw_proc *p, void *arg),
                                 void *arg, sw_proc **out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t j = 0; j < t->cap && n < max; j++) {
        sw_proc *p = t->slots[j].proc;
        if (p && match(p, arg)) {
            sw_proc_retain(p);
            out[n++] = p;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* ---- names: small table, linear probing by string hash ----
 * Invariant: an owner's names_owned is the number of slots with that owner and a non-zero id
 * (live or not yet swept). Every slot that stops being owned goes through release(). */

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

static sw_proc *alive(sw_pidtable *t, uint64_t id)
{
    struct pid_slot *s = find(t, id);
    return s ? s->proc : NULL;
}

/* The slot no longer names anyone: its owner (if alive) has one name fewer. */
static void release(sw_pidtable *t, struct name_slot *s)
{
    sw_proc *o = s->id ? alive(t, s->owner) : NULL;
    if (o && o->names_owned) o->names_owned--;
    s->id = s->owner = 0;
}

/* Rebuilt at twice the live names' count (at least 16): released names and names of ended
 * processes are dropped, so churn cannot grow the table. */
static void names_grow(sw_pidtable *t)
{
    struct name_slot *old = t->names;
    size_t old_cap = t->names_cap, live = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].name && old[i].id && !alive(t, old[i].id)) release(t, &old[i]);
        live += old[i].name && old[i].id;
    }
    size_t cap = 16;
    while (cap < (live + 1) * 4) cap <<= 1;
    t->names = calloc(cap, sizeof *t->names);
    if (!t->names) abort();
    t->names_cap = cap;
    t->names_used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].name) continue;
        if (!old[i].id) {
            free(old[i].name);
            continue;
        }
        size_t j = hash_str(old[i].name) & (cap - 1);
        while (t->names[j].name) j = (j + 1) & (cap - 1);
        t->names[j] = old[i];
        t->names_used++;
    }
    free(old);
}

/* At its bound, an owner's names whose process ended are released: they would go anyway. */
static void sweep(sw_pidtable *t, sw_proc *o)
{
    if (o->names_swept == t->deaths) return;
    o->names_swept = t->deaths;
    for (size_t i = 0; i < t->names_cap; i++) {
        struct name_slot *s = &t->names[i];
        if (s->name && s->id && s->owner == o->id && !alive(t, s->id)) release(t, s);
    }
}

static int name_set(sw_pidtable *t, const char *name, uint64_t id, uint64_t owner, size_t max_owned)
{
    struct name_slot *s = name_find(t, name);
    if (!alive(t, id)) return SW_NAME_NO_PROCESS;
    if (s && s->id && alive(t, s->id)) return s->id == id ? SW_NAME_OK : SW_NAME_TAKEN;
    sw_proc *o = alive(t, owner);
    if (o && max_owned && o->names_owned >= max_owned) {
        sweep(t, o);
        if (o->names_owned >= max_owned) return SW_NAME_TOO_MANY;
    }
    if (s) {
        if (s->id) release(t, s); /* its process ended: the name is free */
    } else {
        char *copy = strdup(name);
        if (!copy) return SW_NAME_NO_PROCESS;
        if ((t->names_used + 1) * 2 > t->names_cap) names_grow(t);
        size_t j = hash_str(name) & (t->names_cap - 1);
        while (t->names[j].name) j = (j + 1) & (t->names_cap - 1);
        s = &t->names[j];
        s->name = copy;
        t->names_used++;
    }
    s->id = id;
    s->owner = o ? owner : 0;
    if (o) o->names_owned++;
    return SW_NAME_OK;
}

int sw_pidtable_register(sw_pidtable *t, const char *name, uint64_t id, uint64_t owner,
                         size_t max_owned)
{
    pthread_mutex_lock(&t->lock);
    int rc = name_set(t, name, id, owner, max_owned);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

uint64_t sw_pidtable_lookup(sw_pidtable *t, const char *name)
{
    pthread_mutex_lock(&t->lock);
    struct name_slot *s = name_find(t, name);
    uint64_t id = s && s->id && alive(t, s->id) ? s->id : 0;
    pthread_mutex_unlock(&t->lock);
    return id;
}

int sw_pidtable_unregister(sw_pidtable *t, const char *name, uint64_t caller)
{
    pthread_mutex_lock(&t->lock);
    struct name_slot *s = name_find(t, name);
    int rc = SW_NAME_UNKNOWN;
    if (s && s->id && !alive(t, s->id)) {
        if (!caller || caller == s->owner) release(t, s); /* released already: its process ended */
    } else if (s && s->id) {
        rc = !caller || caller == s->id || caller == s->owner ? SW_NAME_OK : SW_NAME_NOT_HELD;
        if (rc == SW_NAME_OK)
            release(t, s); /* the slot keeps its name as a tombstone until the table grows */
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
        int c = (unsigned char)*s, d = c >= '0' && c <= '9'                 ? c - '0'
                                       : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10
                                                                            : -1;
        if (d < 0 || n == 16) return 0;
        v = v << 4 | (uint64_t)d;
    }
    return n ? v : 0;
}
