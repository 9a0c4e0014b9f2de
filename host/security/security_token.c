/* Token stores (security_token.h): a chained hash table per store under one mutex, keyed by
 * SipHash-2-4 of the token's bytes with a per-store random key; a lookup compares the full
 * bytes of each candidate in constant time, so neither the table nor the compare tells an
 * attacker how much of a guess was right. */
#include "security_token.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "random.h"
#include "strmap.h"

typedef struct tok {
    struct tok *next;
    uint64_t hash;
    unsigned char bytes[SW_TOKEN_BYTES];
    int64_t expires_ns; /* CLOCK_MONOTONIC */
    sw_sec_identity *id;
} tok;

struct sw_token_store {
    char *id; /* the map's key: the entry's snapshot may be freed by a reload */
    pthread_mutex_t lock;
    unsigned char key[16]; /* SipHash key, from the OS */
    tok **buckets;
    size_t n_buckets, n; /* n_buckets: a power of two */
    int64_t ttl_ns, max_tokens;
    int64_t swept_ns; /* the last sweep for expired tokens (a full store's create) */
};

/* A full store sweeps at most this often: a sweep walks every bucket under the lock, so a loop
 * of creates on a store full of live tokens must not repeat it per call. */
#define SWEEP_EVERY_NS ((int64_t)100000000) /* 100 ms */

struct sw_token_stores {
    pthread_mutex_t lock;
    sw_strmap by_id; /* entry id -> sw_token_store */
};

/* ---- SipHash-2-4 (Aumasson and Bernstein), 64-bit output ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                  \
    do {                                                          \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32); \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                    \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                    \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32); \
    } while (0)

static uint64_t load64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t siphash(const unsigned char key[16], const unsigned char *in, size_t len)
{
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull,
             v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load64(in + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < (len & 7); i++) b |= (uint64_t)in[full + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- token text ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void encode(const unsigned char in[SW_TOKEN_BYTES], char out[SW_TOKEN_LEN + 1])
{
    for (size_t i = 0, o = 0; i < SW_TOKEN_BYTES; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        for (int k = 3; k >= 0; k--) out[o++] = b64[(v >> (6 * k)) & 63];
    }
    out[SW_TOKEN_LEN] = '\0';
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* The bytes of a token's text; false if it is not one (its length and alphabet are public). */
static bool decode(const char *s, size_t len, unsigned char out[SW_TOKEN_BYTES])
{
    if (len != SW_TOKEN_LEN) return false;
    for (size_t i = 0, o = 0; i < SW_TOKEN_LEN; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            int d = b64_value((unsigned char)s[i + k]);
            if (d < 0) return false;
            v = v << 6 | (uint32_t)d;
        }
        out[o++] = (unsigned char)(v >> 16), out[o++] = (unsigned char)(v >> 8);
        out[o++] = (unsigned char)v;
    }
    return true;
}

static bool same_bytes(const unsigned char *a, const unsigned char *b)
{
    volatile unsigned char diff = 0; /* every byte is read whatever the first difference */
    for (size_t i = 0; i < SW_TOKEN_BYTES; i++) diff |= a[i] ^ b[i];
    return diff == 0;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- the table (under the store's lock) ---- */

static tok **slot_of(sw_token_store *ts, const unsigned char *bytes, uint64_t hash)
{
    tok **at = &ts->buckets[hash & (ts->n_buckets - 1)];
    for (; *at; at = &(*at)->next)
        if ((*at)->hash == hash && same_bytes((*at)->bytes, bytes)) return at;
    return at;
}

static void unlink_tok(sw_token_store *ts, tok **at)
{
    tok *t = *at;
    *at = t->next;
    ts->n--;
    sw_sec_identity_release(t->id);
    free(t);
}

static void sweep_expired(sw_token_store *ts, int64_t now)
{
    for (size_t b = 0; b < ts->n_buckets; b++)
        for (tok **at = &ts->buckets[b]; *at;)
            if ((*at)->expires_ns <= now) unlink_tok(ts, at);
            else at = &(*at)->next;
}

static void grow(sw_token_store *ts)
{
    size_t n = ts->n_buckets * 2;
    tok **nb = calloc(n, sizeof *nb);
    if (!nb) return; /* longer chains, still correct */
    for (size_t b = 0; b < ts->n_buckets; b++)
        for (tok *t = ts->buckets[b], *next; t; t = next) {
            next = t->next;
            t->next = nb[t->hash & (n - 1)];
            nb[t->hash & (n - 1)] = t;
        }
    free(ts->buckets);
    ts->buckets = nb;
    ts->n_buckets = n;
}

/* ---- stores ---- */

static sw_token_store *store_new(const char *id)
{
    sw_token_store *ts = calloc(1, sizeof *ts);
    if (!ts) return NULL;
    ts->n_buckets = 1024;
    ts->buckets = calloc(ts->n_buckets, sizeof *ts->buckets);
    ts->id = strdup(id);
    if (!ts->buckets || !ts->id || sw_random_bytes(ts->key, sizeof ts->key) != 0) {
        free(ts->id);
        free(ts->buckets);
        free(ts);
        return NULL;
    }
    pthread_mutex_init(&ts->lock, NULL);
    return ts;
}

static void store_free(sw_token_store *ts)
{
    for (size_t b = 0; b < ts->n_buckets; b++)
        while (ts->buckets[b]) unlink_tok(ts, &ts->buckets[b]);
    free(ts->buckets);
    free(ts->id);
    pthread_mutex_destroy(&ts->lock);
    free(ts);
}

sw_token_stores *sw_token_stores_new(void)
{
    sw_token_stores *all = calloc(1, sizeof *all);
    if (!all) return NULL;
    pthread_mutex_init(&all->lock, NULL);
    sw_strmap_init(&all->by_id);
    return all;
}

void sw_token_stores_free(sw_token_stores *all)
{
    if (!all) return;
    for (size_t i = 0; i < all->by_id.cap; i++)
        if (all->by_id.keys[i]) store_free(all->by_id.vals[i]);
    sw_strmap_free(&all->by_id);
    pthread_mutex_destroy(&all->lock);
    free(all);
}

sw_token_store *sw_token_store_of(sw_token_stores *all, const sw_entry *e)
{
    pthread_mutex_lock(&all->lock);
    sw_token_store *ts = sw_strmap_get(&all->by_id, e->id);
    if (!ts && (ts = store_new(e->id))) sw_strmap_put(&all->by_id, ts->id, ts);
    pthread_mutex_unlock(&all->lock);
    if (!ts) return NULL;
    pthread_mutex_lock(&ts->lock);
    ts->ttl_ns = e->as.token_store.ttl_ns;
    ts->max_tokens = e->as.token_store.max_tokens;
    pthread_mutex_unlock(&ts->lock);
    return ts;
}

int sw_token_create(sw_token_store *ts, sw_sec_identity *id, int64_t ttl_ns,
                    char out[SW_TOKEN_LEN + 1], char *err, size_t errlen)
{
    tok *t = calloc(1, sizeof *t);
    if (!t || sw_random_bytes(t->bytes, sizeof t->bytes) != 0) {
        free(t);
        snprintf(err, errlen, t ? "no random source" : "out of memory");
        return -1;
    }
    int64_t now = now_ns();
    pthread_mutex_lock(&ts->lock);
    if ((int64_t)ts->n >= ts->max_tokens && now - ts->swept_ns >= SWEEP_EVERY_NS) {
        sweep_expired(ts, now);
        ts->swept_ns = now;
    }
    if ((int64_t)ts->n >= ts->max_tokens) {
        pthread_mutex_unlock(&ts->lock);
        free(t);
        snprintf(err, errlen, "token store full");
        return -1;
    }
    if (ts->n >= ts->n_buckets) grow(ts);
    t->hash = siphash(ts->key, t->bytes, sizeof t->bytes);
    t->expires_ns = now + (ttl_ns > 0 ? ttl_ns : ts->ttl_ns);
    t->id = sw_sec_identity_retain(id);
    tok **at = &ts->buckets[t->hash & (ts->n_buckets - 1)];
    t->next = *at;
    *at = t;
    ts->n++;
    pthread_mutex_unlock(&ts->lock);
    encode(t->bytes, out);
    return 0;
}

/* The token's slot under the lock, its expired entry removed; NULL when not live. */
static tok **live_slot(sw_token_store *ts, const unsigned char *bytes, uint64_t hash)
{
    tok **at = slot_of(ts, bytes, hash);
    if (*at && (*at)->expires_ns <= now_ns()) unlink_tok(ts, at);
    return *at ? at : NULL;
}

sw_sec_identity *sw_token_validate(sw_token_store *ts, const char *token, size_t len)
{
    unsigned char bytes[SW_TOKEN_BYTES];
    if (!decode(token, len, bytes)) return NULL;
    uint64_t hash = siphash(ts->key, bytes, sizeof bytes);
    pthread_mutex_lock(&ts->lock);
    tok **at = live_slot(ts, bytes, hash);
    sw_sec_identity *id = at ? sw_sec_identity_retain((*at)->id) : NULL;
    pthread_mutex_unlock(&ts->lock);
    return id;
}

bool sw_token_revoke(sw_token_store *ts, const char *token, size_t len)
{
    unsigned char bytes[SW_TOKEN_BYTES];
    if (!decode(token, len, bytes)) return false;
    uint64_t hash = siphash(ts->key, bytes, sizeof bytes);
    pthread_mutex_lock(&ts->lock);
    tok **at = live_slot(ts, bytes, hash);
    if (at) unlink_tok(ts, at);
    pthread_mutex_unlock(&ts->lock);
    return at != NULL;
}

size_t sw_token_count(sw_token_store *ts)
{
    pthread_mutex_lock(&ts->lock);
    size_t n = ts->n;
    pthread_mutex_unlock(&ts->lock);
    return n;
}
