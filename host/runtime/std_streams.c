/* Processes' standard output and error (std_streams.h): a writer per stream, started on first
 * use under a lock and read without one after (an atomic pointer), and each process's
 * unfinished lines, owned by the process and touched only on its worker. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr */
#endif
#include "std_streams.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "runtime.h"

void sw_std_streams_init(sw_std_streams *s)
{
    atomic_init(&s->writer[SW_STDOUT], NULL);
    atomic_init(&s->writer[SW_STDERR], NULL);
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->stuck, false);
}

static sw_log_writer *writer_of(sw_std_streams *s, sw_std_stream which)
{
    sw_log_writer *w = atomic_load_explicit(&s->writer[which], memory_order_acquire);
    if (w) return w;
    pthread_mutex_lock(&s->lock);
    w = atomic_load_explicit(&s->writer[which], memory_order_relaxed);
    if (!w) {
        sw_log_writer_config c = {.out = which == SW_STDOUT ? stdout : stderr,
                                  .buffered = true,
                                  .capacity = SW_STD_BUFFER_BYTES,
                                  .thread_name =
                                      which == SW_STDOUT ? "steward-stdout" : "steward-stderr"};
        w = sw_log_writer_new(&c);
        atomic_store_explicit(&s->writer[which], w, memory_order_release);
    }
    pthread_mutex_unlock(&s->lock);
    return w;
}

bool sw_std_streams_flush(sw_std_streams *s, int64_t timeout_ns)
{
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        sw_log_writer *w = atomic_load(&s->writer[i]);
        if (w) ok = sw_log_writer_flush(w, timeout_ns) && ok;
    }
    if (!ok) atomic_store(&s->stuck, true);
    return ok;
}

void sw_std_streams_free(sw_std_streams *s)
{
    int64_t timeout = atomic_load(&s->stuck) ? 0 : SW_STD_FLUSH_TIMEOUT_NS;
    for (int i = 0; i < 2; i++) sw_log_writer_free(atomic_load(&s->writer[i]), timeout);
    pthread_mutex_destroy(&s->lock);
}

/* ---- a process's lines ---- */

static bool put(sw_proc *p, sw_std_stream which, const char *data, size_t n)
{
    sw_log_writer *w = writer_of(&p->rt->std, which);
    return w && sw_log_writer_put(w, data, n);
}

/* Drops the first n bytes of the line buffer. */
static void consume(sw_std_line *l, size_t n)
{
    memmove(l->buf, l->buf + n, l->n - n);
    l->n -= n;
}

/* What may go out now: every finished line; a full buffer's piece of a longer line; with
 * `all`, everything. */
static size_t sendable(const sw_std_line *l, bool all)
{
    if (all) return l->n;
    const char *nl = memrchr(l->buf, '\n', l->n);
    if (nl) return (size_t)(nl - l->buf) + 1;
    return l->n == SW_STD_LINE_MAX ? l->n : 0;
}

sw_std_progress sw_std_put(sw_proc *p, sw_std_stream which, const char *data, size_t n, bool all)
{
    sw_std_progress r = {0};
    sw_std_line *l = p->std_line[which];
    if (!l) {
        if (!n) return r;
        if (!(l = malloc(sizeof *l))) {
            r.failed = true;
            return r;
        }
        l->n = 0;
        p->std_line[which] = l;
    }
    for (;;) {
        size_t k = SW_STD_LINE_MAX - l->n < n - r.taken ? SW_STD_LINE_MAX - l->n : n - r.taken;
        memcpy(l->buf + l->n, data + r.taken, k);
        l->n += k;
        r.taken += k;
        size_t m = sendable(l, all && r.taken == n);
        if (!m) break; /* then all of data is taken: only a full buffer has no room */
        if (!put(p, which, l->buf, m)) {
            r.waiting = true;
            break;
        }
        consume(l, m);
        r.sent += m;
    }
    return r;
}

void sw_std_drop(sw_proc *p, sw_std_stream which)
{
    if (p->std_line[which]) p->std_line[which]->n = 0;
}

void sw_std_proc_end(sw_proc *p)
{
    for (int i = 0; i < 2; i++) {
        if (!p->std_line[i]) continue;
        sw_std_put(p, (sw_std_stream)i, "", 0, true); /* one try: no one waits any more */
        free(p->std_line[i]);
        p->std_line[i] = NULL;
    }
}
