/* Summaries of repeated records (log_limit.h). A fixed table of slots, one per (level,
 * service, message), 4-way set-associative by hash, the least recently seen evicted; each
 * slot holds the identity of its last record (a hash of `reason` and `error`), its window and
 * its counts. A storm table marks the services with a warn or error record being suppressed,
 * until that window ends; an atomic count of storms lets info and debug records skip the lock
 * when there are none (the common case). Hashes are 64-bit FNV-1a: two different records
 * are taken for one only if their hashes collide. */
#include "log_limit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS    256
#define WAYS     4
#define STORMS   64
#define TEXT_MAX 1024 /* bytes of a summary's service, message, reason, error */

typedef struct slot {
    uint64_t key;   /* hash of level, service, message; 0: free */
    uint64_t ident; /* hash of reason and error */
    sw_log_level level;
    char *service, *msg, *reason, *error; /* for the summary */
    int64_t window_end;                   /* 0: no window open */
    int64_t last_seen;
    unsigned passed;
    uint64_t suppressed;
} slot;

typedef struct storm {
    uint64_t service; /* hash of the service */
    int64_t until;    /* 0: free */
} storm;

struct sw_log_limit {
    pthread_mutex_t lock;
    unsigned burst;
    int64_t window;
    atomic_int storms_on; /* entries of `storms` in use */
    slot slots[SLOTS];
    storm storms[STORMS];
};

/* ---- hashing ---- */

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME  1099511628211ULL

static uint64_t feed(uint64_t h, const void *p, size_t n)
{
    const unsigned char *u = p;
    for (size_t i = 0; i < n; i++) h = (h ^ u[i]) * FNV_PRIME;
    return h;
}

/* A string, or its absence (NULL), told apart from every string. */
static uint64_t feed_str(uint64_t h, const char *s)
{
    unsigned char tag = s ? 1 : 2;
    h = feed(h, &tag, 1);
    return s ? feed(h, s, strlen(s) + 1) : h;
}

static uint64_t service_hash(const char *service) { return feed_str(FNV_OFFSET, service); }

static uint64_t key_hash(sw_log_level level, const char *service, const char *msg)
{
    unsigned char l = (unsigned char)level;
    uint64_t h = feed_str(feed(FNV_OFFSET, &l, 1), service);
    h = feed_str(h, msg);
    return h ? h : 1;
}

/* ---- identity ---- */

/* The text of a field's value: *out points into the field or to buf, or is malloc'd (JSON;
 * *heap set). */
static const char *value_text(const sw_log_field *f, char *buf, size_t size, bool *heap)
{
    *heap = false;
    switch (f->type) {
    case SW_LF_STR: return f->s ? f->s : "";
    case SW_LF_INT: snprintf(buf, size, "%lld", (long long)f->i); return buf;
    case SW_LF_NUM: snprintf(buf, size, "%.17g", f->d); return buf;
    case SW_LF_BOOL: return f->b ? "true" : "false";
    default: {
        char *text = sw_json_dump(f->j ? f->j : json_null(), false, NULL);
        *heap = text != NULL;
        return text ? text : "null";
    }
    }
}

typedef struct ident {
    const char *reason, *error; /* NULL: absent */
    bool heap[2];
    char buf[2][32];
    uint64_t hash;
} ident;

/* The identity of a record: its last `reason` and `error` fields (a key given twice keeps its
 * last value, as in the line). */
static void ident_of(ident *id, const sw_log_field *fields, size_t n)
{
    const sw_log_field *which[2] = {NULL, NULL};
    for (size_t i = 0; i < n; i++) {
        const char *k = fields[i].key;
        if (!k) continue;
        if (strcmp(k, "reason") == 0) which[0] = &fields[i];
        else if (strcmp(k, "error") == 0) which[1] = &fields[i];
    }
    const char *text[2] = {NULL, NULL};
    for (int j = 0; j < 2; j++) {
        id->heap[j] = false;
        if (which[j]) text[j] = value_text(which[j], id->buf[j], sizeof id->buf[j], &id->heap[j]);
    }
    id->reason = text[0];
    id->error = text[1];
    id->hash = feed_str(feed_str(FNV_OFFSET, id->reason), id->error);
}

static void ident_clear(ident *id)
{
    if (id->heap[0]) free((char *)id->reason);
    if (id->heap[1]) free((char *)id->error);
}

/* A copy of s cut at TEXT_MAX bytes on a character boundary; NULL for NULL (or no memory). */
static char *copy_text(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    if (n > TEXT_MAX) {
        n = TEXT_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    return strndup(s, n);
}

/* ---- summaries ---- */

void sw_log_summary_clear(sw_log_summary *s)
{
    free(s->service);
    free(s->msg);
    free(s->reason);
    free(s->error);
    memset(s, 0, sizeof *s);
}

/* The summary of a slot's suppressed records (copies), and the count back to 0; false when
 * there is nothing to tell. */
static bool take_summary(slot *s, sw_log_summary *out)
{
    if (s->suppressed == 0) return false;
    *out = (sw_log_summary){.level = s->level,
                            .service = copy_text(s->service),
                            .msg = copy_text(s->msg),
                            .reason = copy_text(s->reason),
                            .error = copy_text(s->error),
                            .suppressed = s->suppressed};
    s->suppressed = 0;
    return true;
}

static void slot_clear(slot *s)
{
    free(s->service);
    free(s->msg);
    free(s->reason);
    free(s->error);
    memset(s, 0, sizeof *s);
}

static void set_ident(slot *s, const ident *id)
{
    free(s->reason);
    free(s->error);
    s->reason = copy_text(id->reason);
    s->error = copy_text(id->error);
    s->ident = id->hash;
}

static void open_window(sw_log_limit *l, slot *s, int64_t now)
{
    s->window_end = now + l->window;
    s->passed = 1;
    s->suppressed = 0;
}

/* ---- storms ---- */

static storm *find_storm(sw_log_limit *l, uint64_t service)
{
    for (int i = 0; i < STORMS; i++)
        if (l->storms[i].until && l->storms[i].service == service) return &l->storms[i];
    return NULL;
}

/* The service storms until `until` at least. */
static void mark_storm(sw_log_limit *l, uint64_t service, int64_t until, int64_t now)
{
    storm *st = find_storm(l, service);
    if (st) {
        if (until > st->until) st->until = until;
        return;
    }
    storm *pick = NULL;
    for (int i = 0; i < STORMS && !pick; i++)
        if (l->storms[i].until == 0) pick = &l->storms[i];
    for (int i = 0; i < STORMS && !pick; i++)
        if (l->storms[i].until <= now) pick = &l->storms[i];
    if (!pick) { /* all in use: the one ending first makes room */
        pick = &l->storms[0];
        for (int i = 1; i < STORMS; i++)
            if (l->storms[i].until < pick->until) pick = &l->storms[i];
    }
    if (pick->until == 0) atomic_fetch_add_explicit(&l->storms_on, 1, memory_order_relaxed);
    pick->service = service;
    pick->until = until;
}

/* ---- the verdict ---- */

sw_log_limit *sw_log_limit_new(unsigned burst, int64_t window_ns)
{
    sw_log_limit *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    pthread_mutex_init(&l->lock, NULL);
    l->burst = burst ? burst : 1;
    l->window = window_ns > 0 ? window_ns : 1;
    atomic_init(&l->storms_on, 0);
    return l;
}

void sw_log_limit_free(sw_log_limit *l)
{
    if (!l) return;
    for (int i = 0; i < SLOTS; i++) slot_clear(&l->slots[i]);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

/* The slot of key: its own, else a free one, else the least recently seen of its set (whose
 * summary goes to *evicted). */
static slot *slot_for(sw_log_limit *l, uint64_t key, bool *fresh, sw_log_summary *evicted,
                      bool *has_evicted)
{
    slot *set = &l->slots[(key % (SLOTS / WAYS)) * WAYS];
    slot *pick = NULL;
    for (int i = 0; i < WAYS; i++)
        if (set[i].key == key) {
            *fresh = false;
            return &set[i];
        }
    for (int i = 0; i < WAYS && !pick; i++)
        if (set[i].key == 0) pick = &set[i];
    if (!pick) {
        pick = &set[0];
        for (int i = 1; i < WAYS; i++)
            if (set[i].last_seen < pick->last_seen) pick = &set[i];
        *has_evicted = take_summary(pick, evicted);
        slot_clear(pick);
    }
    *fresh = true;
    return pick;
}

bool sw_log_limit_exempt(sw_log_limit *l, sw_log_level level)
{
    return level < SW_LOG_WARN && atomic_load_explicit(&l->storms_on, memory_order_relaxed) == 0;
}

bool sw_log_limit_check(sw_log_limit *l, int64_t now_ns, sw_log_level level, const char *service,
                        const char *msg, const sw_log_field *fields, size_t n_fields,
                        sw_log_summary before[2], size_t *n_before, int64_t *wake_ns)
{
    *n_before = 0;
    *wake_ns = 0;
    bool failure = level >= SW_LOG_WARN;
    if (!failure && atomic_load_explicit(&l->storms_on, memory_order_relaxed) == 0) return true;
    uint64_t svc = service_hash(service);
    if (!failure) {
        pthread_mutex_lock(&l->lock);
        storm *st = find_storm(l, svc);
        bool storming = st && st->until > now_ns;
        if (st && !storming) { /* over: free it, so the count can come back to 0 */
            st->until = 0;
            atomic_fetch_sub_explicit(&l->storms_on, 1, memory_order_relaxed);
        }
        pthread_mutex_unlock(&l->lock);
        if (!storming) return true;
    }
    uint64_t key = key_hash(level, service, msg);
    ident id;
    ident_of(&id, fields, n_fields);
    bool pass = true, fresh, evicted = false;
    pthread_mutex_lock(&l->lock);
    slot *s = slot_for(l, key, &fresh, &before[0], &evicted);
    if (evicted) (*n_before)++;
    if (fresh) {
        s->key = key;
        s->level = level;
        s->service = copy_text(service);
        s->msg = copy_text(msg);
        set_ident(s, &id);
        open_window(l, s, now_ns);
    } else if (s->ident != id.hash || s->window_end == 0 || now_ns >= s->window_end) {
        if (take_summary(s, &before[*n_before])) (*n_before)++;
        if (s->ident != id.hash) set_ident(s, &id);
        open_window(l, s, now_ns);
    } else if (s->passed < l->burst) {
        s->passed++;
    } else {
        pass = false;
        if (++s->suppressed == 1) *wake_ns = s->window_end;
        if (failure) mark_storm(l, svc, s->window_end, now_ns);
    }
    s->last_seen = now_ns;
    pthread_mutex_unlock(&l->lock);
    ident_clear(&id);
    return pass;
}

int64_t sw_log_limit_expire(sw_log_limit *l, int64_t now_ns, bool all,
                            void (*emit)(void *arg, const sw_log_summary *s), void *arg)
{
    sw_log_summary *out = NULL;
    size_t n = 0, cap = 0;
    int64_t next = 0;
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < SLOTS; i++) {
        slot *s = &l->slots[i];
        if (s->suppressed == 0) continue;
        if (!all && s->window_end > now_ns) {
            if (!next || s->window_end < next) next = s->window_end;
            continue;
        }
        if (n == cap) {
            size_t c = cap ? cap * 2 : 8;
            sw_log_summary *p = realloc(out, c * sizeof *p);
            if (!p) break; /* no memory: told later */
            out = p;
            cap = c;
        }
        take_summary(s, &out[n++]);
        s->window_end = 0; /* the next record opens a new window */
        s->passed = 0;
    }
    for (int i = 0; i < STORMS; i++) {
        storm *st = &l->storms[i];
        if (st->until && (all || st->until <= now_ns)) {
            st->until = 0;
            atomic_fetch_sub_explicit(&l->storms_on, 1, memory_order_relaxed);
        } else if (st->until && (!next || st->until < next)) {
            next = st->until; /* to free it then */
        }
    }
    pthread_mutex_unlock(&l->lock);
    for (size_t i = 0; i < n; i++) {
        emit(arg, &out[i]);
        sw_log_summary_clear(&out[i]);
    }
    free(out);
    return next;
}
