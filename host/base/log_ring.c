/* The in-memory log rings (log_ring.h): a hash table of per-service rings of record pointers
 * (each ring a circular array grown up to its line bound), the host's ring beside it, a global
 * sequence number, and the followers' feed (a linked queue through sw_log_rec.feed_next). */
#include "log_ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log_record.h"

#define FIRST_SLOTS 16

typedef struct ring {
    char *service; /* NULL: the host's */
    sw_log_rec **slots;
    size_t cap, head, count, bytes; /* records in slots[(head + i) % cap], oldest first */
} ring;

struct sw_log_ring {
    pthread_mutex_t lock;
    size_t max_lines, max_bytes;
    uint64_t seq;
    ring host;
    ring **table; /* open addressing by service id; cap a power of 2, at most half full */
    size_t table_cap, n_rings;
    /* the feed */
    unsigned followers;
    sw_log_rec *feed_head, *feed_tail;
    size_t feed_bytes;
    uint64_t feed_dropped;
    void (*wake)(void *arg);
    void *wake_arg;
};

static size_t rec_size(const sw_log_rec *rec) { return sizeof *rec + rec->len; }

void sw_log_rec_release(sw_log_rec *rec)
{
    if (rec && atomic_fetch_sub_explicit(&rec->refs, 1, memory_order_acq_rel) == 1) free(rec);
}

/* ---- rings ---- */

static sw_log_rec *ring_at(const ring *g, size_t i) { return g->slots[(g->head + i) % g->cap]; }

static void ring_drop_oldest(ring *g)
{
    sw_log_rec *old = g->slots[g->head];
    g->head = (g->head + 1) % g->cap;
    g->count--;
    g->bytes -= rec_size(old);
    sw_log_rec_release(old);
}

/* Room for one more slot, growing the array up to max_lines; false when memory runs out. */
static bool ring_room(ring *g, size_t max_lines)
{
    if (g->count < g->cap) return true;
    if (g->cap >= max_lines) {
        ring_drop_oldest(g);
        return true;
    }
    size_t cap = g->cap ? g->cap * 2 : FIRST_SLOTS;
    if (cap > max_lines) cap = max_lines;
    sw_log_rec **slots = malloc(cap * sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < g->count; i++) slots[i] = ring_at(g, i);
    free(g->slots);
    g->slots = slots;
    g->cap = cap;
    g->head = 0;
    return true;
}

static void ring_push(sw_log_ring *r, ring *g, sw_log_rec *rec)
{
    while (g->count > 0 && g->bytes + rec_size(rec) > r->max_bytes) ring_drop_oldest(g);
    if (!ring_room(g, r->max_lines)) {
        sw_log_rec_release(rec);
        return;
    }
    g->slots[(g->head + g->count) % g->cap] = rec;
    g->count++;
    g->bytes += rec_size(rec);
}

static void ring_clear(ring *g)
{
    while (g->count > 0) ring_drop_oldest(g);
    free(g->slots);
    free(g->service);
}

/* ---- the table of service rings ---- */

static size_t hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static ring **table_slot(ring **table, size_t cap, const char *service)
{
    size_t i = hash(service) & (cap - 1);
    while (table[i] && strcmp(table[i]->service, service) != 0) i = (i + 1) & (cap - 1);
    return &table[i];
}

static bool table_grow(sw_log_ring *r)
{
    size_t cap = r->table_cap ? r->table_cap * 2 : 64;
    ring **table = calloc(cap, sizeof *table);
    if (!table) return false;
    for (size_t i = 0; i < r->table_cap; i++)
        if (r->table[i]) *table_slot(table, cap, r->table[i]->service) = r->table[i];
    free(r->table);
    r->table = table;
    r->table_cap = cap;
    return true;
}

/* The ring of service (NULL: the host's), made on first use; NULL when it cannot be. */
static ring *ring_of(sw_log_ring *r, const char *service, bool make)
{
    if (!service) return &r->host;
    ring **slot = r->table_cap ? table_slot(r->table, r->table_cap, service) : NULL;
    if (slot && *slot) return *slot;
    if (!make || r->n_rings >= SW_LOG_RING_MAX_SERVICES) return NULL;
    if (2 * (r->n_rings + 1) > r->table_cap) {
        if (!table_grow(r)) return NULL;
        slot = table_slot(r->table, r->table_cap, service);
    }
    ring *g = calloc(1, sizeof *g);
    if (!g || !(g->service = strdup(service))) {
        free(g);
        return NULL;
    }
    *slot = g;
    r->n_rings++;
    return g;
}

/* ---- the store ---- */

sw_log_ring *sw_log_ring_new(size_t lines, size_t bytes)
{
    sw_log_ring *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_init(&r->lock, NULL);
    r->max_lines = lines ? lines : 1;
    r->max_bytes = bytes;
    return r;
}

static void feed_clear(sw_log_ring *r)
{
    for (sw_log_rec *rec = r->feed_head, *next; rec; rec = next) {
        next = rec->feed_next;
        sw_log_rec_release(rec);
    }
    r->feed_head = r->feed_tail = NULL;
    r->feed_bytes = 0;
}

void sw_log_ring_free(sw_log_ring *r)
{
    if (!r) return;
    feed_clear(r);
    ring_clear(&r->host);
    for (size_t i = 0; i < r->table_cap; i++)
        if (r->table[i]) {
            ring_clear(r->table[i]);
            free(r->table[i]);
        }
    free(r->table);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* A follower is listening: the record joins the feed too (lock held). */
static void feed_push(sw_log_ring *r, sw_log_rec *rec)
{
    if (r->feed_bytes + rec_size(rec) > SW_LOG_FEED_BYTES) {
        r->feed_dropped++;
        return;
    }
    atomic_fetch_add_explicit(&rec->refs, 1, memory_order_relaxed);
    rec->feed_next = NULL;
    bool was_empty = !r->feed_head;
    if (r->feed_tail) r->feed_tail->feed_next = rec;
    else r->feed_head = rec;
    r->feed_tail = rec;
    r->feed_bytes += rec_size(rec);
    if (was_empty && r->wake) r->wake(r->wake_arg);
}

void sw_log_ring_put(sw_log_ring *r, int64_t wall_ns, const char *service, const char *line,
                     size_t n)
{
    if (!r) return;
    sw_log_rec *rec = malloc(sizeof *rec + n); /* outside the lock */
    if (!rec) return;
    atomic_init(&rec->refs, 1);
    rec->feed_next = NULL;
    rec->wall_ns = wall_ns;
    rec->len = n;
    memcpy(rec->data, line, n);
    pthread_mutex_lock(&r->lock);
    ring *g = ring_of(r, service, true);
    if (g) {
        rec->seq = ++r->seq;
        rec->service = g->service;
        if (r->followers) feed_push(r, rec);
        ring_push(r, g, rec);
    }
    pthread_mutex_unlock(&r->lock);
    if (!g) free(rec);
}

/* ---- reading ---- */

/* Appends to out the records of g that match (at most q->lines, the newest). */
static size_t collect(const ring *g, const sw_log_query *q, sw_log_rec **out)
{
    size_t first = g->count;
    while (first > 0 && g->count - first < q->lines &&
           ring_at(g, first - 1)->wall_ns >= q->since_ns)
        first--;
    for (size_t i = first; i < g->count; i++) out[i - first] = ring_at(g, i);
    return g->count - first;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = (*(sw_log_rec *const *)a)->seq, y = (*(sw_log_rec *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* The matching records, oldest first, into *found (malloc'd); their count, or -1. Lock held. */
static long find(sw_log_ring *r, const sw_log_query *q, sw_log_rec ***found)
{
    size_t most = 0;
    if (q->service) {
        ring *g = ring_of(r, q->service, false);
        most = g ? g->count : 0;
    } else {
        most = r->host.count;
        for (size_t i = 0; i < r->table_cap; i++) most += r->table[i] ? r->table[i]->count : 0;
    }
    *found = malloc((most ? most : 1) * sizeof **found);
    if (!*found) return -1;
    size_t n = 0;
    if (q->service) {
        ring *g = ring_of(r, q->service, false);
        if (g) n = collect(g, q, *found);
        return (long)n;
    }
    n = collect(&r->host, q, *found);
    for (size_t i = 0; i < r->table_cap; i++)
        if (r->table[i]) n += collect(r->table[i], q, *found + n);
    qsort(*found, n, sizeof **found, by_seq);
    if (n > q->lines) { /* keep the newest */
        memmove(*found, *found + (n - q->lines), q->lines * sizeof **found);
        n = q->lines;
    }
    return (long)n;
}

void sw_log_rec_json(const sw_log_rec *rec, lbuf *out)
{
    sw_log_record_json(out, rec->data, rec->len, rec->service, rec->wall_ns);
}

bool sw_log_lines_add(sw_log_lines *b, const char *p, size_t n, size_t limit)
{
    if (b->len + n > limit) return false;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) return false;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return true;
}

/* The JSON lines of found[0..n) into out; their count. Each record is released. */
static size_t format_all(sw_log_rec **found, size_t n, sw_log_lines *out)
{
    size_t count = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        lbuf b;
        sw_log_rec_json(found[i], &b);
        if (ok && b.len > 0) {
            ok = sw_log_lines_add(out, b.p, b.len, SIZE_MAX);
            count += ok;
        }
        sw_log_line_free(&b);
        sw_log_rec_release(found[i]);
    }
    return count;
}

int sw_log_ring_read(sw_log_ring *r, const sw_log_query *q, char **out, size_t *len, size_t *count,
                     uint64_t *seq)
{
    *out = NULL;
    *len = *count = 0;
    pthread_mutex_lock(&r->lock); /* the records are picked under the lock, formatted without */
    *seq = r->seq;
    sw_log_rec **found;
    long n = find(r, q, &found);
    for (long i = 0; i < n; i++)
        atomic_fetch_add_explicit(&found[i]->refs, 1, memory_order_relaxed);
    if (n >= 0 && q->follow) r->followers++;
    pthread_mutex_unlock(&r->lock);
    sw_log_lines lines = {0};
    if (n > 0) *count = format_all(found, (size_t)n, &lines);
    *out = lines.p;
    *len = lines.len;
    free(found);
    return n >= 0 ? 0 : -1;
}

void sw_log_ring_unfollow(sw_log_ring *r)
{
    pthread_mutex_lock(&r->lock);
    if (r->followers > 0 && --r->followers == 0) {
        feed_clear(r);
        r->feed_dropped = 0;
    }
    pthread_mutex_unlock(&r->lock);
}

void sw_log_ring_set_wake(sw_log_ring *r, void (*wake)(void *arg), void *arg)
{
    pthread_mutex_lock(&r->lock);
    r->wake = wake;
    r->wake_arg = arg;
    pthread_mutex_unlock(&r->lock);
}

sw_log_rec *sw_log_ring_take_feed(sw_log_ring *r, uint64_t *dropped)
{
    pthread_mutex_lock(&r->lock);
    sw_log_rec *list = r->feed_head;
    r->feed_head = r->feed_tail = NULL;
    r->feed_bytes = 0;
    *dropped = r->feed_dropped;
    r->feed_dropped = 0;
    pthread_mutex_unlock(&r->lock);
    return list;
}
