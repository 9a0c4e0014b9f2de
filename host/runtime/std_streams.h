/* The host's standard output and error as processes write to them (the `io` module,
 * docs/lua-api.md "io"). Each stream is a bounded buffer drained by its own writer thread
 * (base/log_writer.h), started on first use, so a reader that does not keep up (a full pipe)
 * never blocks a worker: a write that finds it full tells its caller, whose task waits for
 * room (lua/io.lua). Each process keeps its unfinished line (at most SW_STD_LINE_MAX bytes)
 * until its newline comes, so lines of different processes never interleave; what is left
 * goes out when it ends. */
#ifndef STEWARD_STD_STREAMS_H
#define STEWARD_STD_STREAMS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_writer.h"

typedef struct sw_proc sw_proc;

typedef enum { SW_STDOUT, SW_STDERR } sw_std_stream;

#define SW_STD_BUFFER_BYTES     ((size_t)1 << 20) /* per stream: bytes waiting for the reader */
#define SW_STD_LINE_MAX         4096              /* per process and stream: an unfinished line */
#define SW_STD_FLUSH_TIMEOUT_NS ((int64_t)2000000000) /* how long the end waits for a reader */
#define SW_STD_PATIENCE_S       5 /* a waiting write gives up after this long without progress */

/* The host's two streams (one per runtime). */
typedef struct sw_std_streams {
    _Atomic(sw_log_writer *) writer[2];
    pthread_mutex_t lock; /* starting a writer */
    atomic_bool stuck;    /* a flush timed out: the end does not wait again */
} sw_std_streams;

/* A process's unfinished line on one stream (sw_proc.std_line). */
typedef struct sw_std_line {
    size_t n;
    char buf[SW_STD_LINE_MAX];
} sw_std_line;

void sw_std_streams_init(sw_std_streams *s);
/* Waits until what was taken so far is written, at most timeout_ns; false on timeout. Any
 * thread. */
bool sw_std_streams_flush(sw_std_streams *s, int64_t timeout_ns);
/* Writes what is buffered (at most SW_STD_FLUSH_TIMEOUT_NS for a stuck reader, not at all
 * when a flush already timed out) and stops the writers. After every process has ended. */
void sw_std_streams_free(sw_std_streams *s);

/* What sw_std_put did. */
typedef struct sw_std_progress {
    size_t taken; /* bytes of data now in p's line buffer or sent */
    size_t sent;  /* bytes that went to the stream's buffer (progress, for a waiting writer) */
    bool waiting; /* the stream's buffer is full: some of data, or finished lines, wait */
    bool failed;  /* no memory for p's line buffer */
} sw_std_progress;

/* Appends data to p's line on the stream and sends what is ready while the stream's buffer has
 * room: every finished line, a piece of SW_STD_LINE_MAX bytes of a longer line, and with `all`
 * (a flush) the unfinished line too. What has no room stays: the caller retries with the rest
 * of data (from `taken` on) or drops it. Never blocks. Thread: p's worker. */
sw_std_progress sw_std_put(sw_proc *p, sw_std_stream which, const char *data, size_t n, bool all);
/* Forgets what waits in p's line buffer (a writer that gave up). */
void sw_std_drop(sw_proc *p, sw_std_stream which);
/* As p ends (before its exit is reported): sends what waits in its line buffers if there is
 * room (no one waits any more), and frees them. */
void sw_std_proc_end(sw_proc *p);

#endif
