/* Recent log records kept in memory, per service (docs/operating.md, Logs): one ring per
 * service id (and one for the host's own records) keeps that service's last `lines` records
 * within `bytes` (at least the newest), the oldest going first; a service that logs a flood
 * pushes out its own records, never another's. A record is kept in the compact form of
 * log_record.h (nothing is formatted on the logging thread) with its wall time and a sequence
 * number that orders all records, and read as its JSON line. `steward logs` reads the last N
 * records of one service or of all, since a time; a follower gets every later record through
 * the feed: a bounded queue handed whole to the reader's loop, woken by a callback, counting
 * what it had to drop. Any thread (one lock, held for a push: no I/O under it). */
#ifndef STEWARD_LOG_RING_H
#define STEWARD_LOG_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_format.h"

#define SW_LOG_RING_LINES        1000                /* log.ring_lines: records per service */
#define SW_LOG_RING_BYTES        ((size_t)256 << 10) /* log.ring_size: bytes per service */
#define SW_LOG_RING_MAX_SERVICES 4096 /* rings; records of services past this are not kept */
#define SW_LOG_FEED_BYTES        ((size_t)4 << 20) /* records waiting for followers */

typedef struct sw_log_ring sw_log_ring;

/* One record; immutable once pushed, shared by its ring and the feed (reference counted). */
typedef struct sw_log_rec {
    struct sw_log_rec *feed_next;
    atomic_uint refs;
    uint64_t seq;
    int64_t wall_ns;
    const char *service; /* the ring's copy of the id (lives as long as the store); NULL: host */
    size_t len;          /* of data */
    char data[];         /* the record as log_record.h encodes it */
} sw_log_rec;

/* NULL when memory runs out. lines >= 1. */
sw_log_ring *sw_log_ring_new(size_t lines, size_t bytes);
/* No other thread may use it any more; records still held (feed lists) must be released first. */
void sw_log_ring_free(sw_log_ring *r);

/* Keeps one record: data (n bytes, sw_log_record_encode), service NULL for the host's own.
 * Never blocks on a reader; a record that cannot be kept (memory, too many services) is lost. */
void sw_log_ring_put(sw_log_ring *r, int64_t wall_ns, const char *service, const char *line,
                     size_t n);

typedef struct sw_log_query {
    const char *service; /* NULL: every service and the host, interleaved in order */
    size_t lines;        /* the last this many (0: none) */
    int64_t since_ns;    /* records at or after this wall time; 0: any */
    bool follow;         /* also become a follower (sw_log_ring_unfollow when done) */
} sw_log_query;

/* The matching records' JSON lines, oldest first, into a malloc'd buffer (*out, *len; NULL when
 * none), their count in *count, and in *seq the sequence number of the newest record kept at
 * that moment: a follower wants the feed's records after it. 0, or -1 when memory runs out. */
int sw_log_ring_read(sw_log_ring *r, const sw_log_query *q, char **out, size_t *len, size_t *count,
                     uint64_t *seq);
void sw_log_ring_unfollow(sw_log_ring *r);

/* wake(arg) is called (any thread, the lock held: it must not log) when a record enters an
 * empty feed; NULL: none. Set before the first follower, cleared after the last. */
void sw_log_ring_set_wake(sw_log_ring *r, void (*wake)(void *arg), void *arg);
/* The feed's records, oldest first (linked by feed_next; release each), and in *dropped how
 * many were lost since the last call because the feed was full. */
sw_log_rec *sw_log_ring_take_feed(sw_log_ring *r, uint64_t *dropped);
void sw_log_rec_release(sw_log_rec *rec);
/* The record's JSON line into out (free with sw_log_line_free); out->len 0 when it cannot. */
void sw_log_rec_json(const sw_log_rec *rec, lbuf *out);

/* A growing buffer of lines (malloc'd p; zero it to start). */
typedef struct sw_log_lines {
    char *p;
    size_t len, cap;
} sw_log_lines;

/* Appends n bytes of lines if the buffer stays within limit bytes; false when they do not fit
 * or memory runs out. */
bool sw_log_lines_add(sw_log_lines *b, const char *p, size_t n, size_t limit);

#endif
