/* Where the log's finished lines go (docs/operating.md, Logs): one descriptor (or FILE) and a
 * writer thread. Buffered: each line is copied into a bounded byte ring under a short lock and
 * the thread writes the ring out, whole lines per write(), so a stuck reader of a pipe never
 * blocks the host: when the ring is full the line is dropped and counted, and once writing
 * works again a notice ("N log lines dropped") takes the place of the gap. Direct: the caller
 * writes the line itself (a regular file, which cannot push back). In both modes the thread
 * also calls a tick function at a deadline (the summaries of log_limit.h). A sink function may
 * take the lines instead of a FILE (the per-service files of log_files.h). Any thread. */
#ifndef STEWARD_LOG_WRITER_H
#define STEWARD_LOG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sw_log_writer sw_log_writer;

/* Writes the notice for `dropped` lost lines into out (cap bytes, a whole line with its
 * '\n'); its length, 0 when it cannot. Called with the writer's lock held: it must not log. */
typedef size_t (*sw_log_notice_fn)(void *arg, uint64_t dropped, char *out, size_t cap);
/* Called on the writer thread, with no lock held, once the deadline set by
 * sw_log_writer_wake_at has passed; may put lines. Returns the next deadline (CLOCK_MONOTONIC
 * ns), 0 for none. */
typedef int64_t (*sw_log_tick_fn)(void *arg, int64_t now_ns);

/* Instead of a FILE: takes a region of whole lines (n bytes, each line ended by '\n'); true
 * when they were written. On the writer thread without the lock (direct: the caller's thread,
 * with the lock held); it must not log. */
typedef bool (*sw_log_sink_fn)(void *arg, const char *p, size_t n);

typedef struct sw_log_writer_config {
    FILE *out;           /* where lines go, unless sink */
    sw_log_sink_fn sink; /* may be NULL */
    bool buffered;       /* false: direct */
    size_t capacity;     /* the ring's bytes (buffered) */
    sw_log_notice_fn notice;
    sw_log_tick_fn tick; /* may be NULL */
    void *arg;
    const char *thread_name; /* NULL: "steward-log" */
} sw_log_writer_config;

/* Counters since the start (for tests and benchmarks). */
typedef struct sw_log_writer_stats {
    uint64_t lines, dropped; /* lines taken; lines lost (ring full or write error) */
} sw_log_writer_stats;

/* NULL when memory runs out. Without a thread (it cannot be started) a buffered writer turns
 * direct and no tick is called. */
sw_log_writer *sw_log_writer_new(const sw_log_writer_config *c);
/* Takes one whole line (n bytes, '\n' included): buffered, a copy into the ring or a drop;
 * direct, written before the call returns (a failed write is a drop). Never blocks on the
 * reader in buffered mode. false when the line was dropped. */
bool sw_log_writer_put(sw_log_writer *w, const char *line, size_t n);
/* Asks for a tick at deadline_ns (CLOCK_MONOTONIC) unless one is due earlier. */
void sw_log_writer_wake_at(sw_log_writer *w, int64_t deadline_ns);
/* Waits until every line taken so far is written (or dropped), at most timeout_ns; false on
 * timeout. */
bool sw_log_writer_flush(sw_log_writer *w, int64_t timeout_ns);
sw_log_writer_stats sw_log_writer_stats_of(sw_log_writer *w);
/* Writes what is buffered, waiting at most timeout_ns for a stuck reader (then the thread is
 * cancelled inside its write() and the rest is lost), and frees the writer. No other thread
 * may use it any more. */
void sw_log_writer_free(sw_log_writer *w, int64_t timeout_ns);

int64_t sw_log_clock_ns(void); /* CLOCK_MONOTONIC in ns */

#endif
