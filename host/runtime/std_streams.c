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

/* Sends the first n bytes of the line buffer and keeps the rest. */
static bool send_first(sw_proc *p, sw_std_stream which, size_t n)
{
    sw_std_line *l = p->std_line[which];
    bool ok = put(p, which, l->buf, n);
    memmove(l->buf, l->buf + n, l->n - n);
    l->n -= n;
    return ok;
}

/* Up to and including the buffer's last newline; 0 if it has none. */
static size_t finished(const sw_std_line *l)
{
    const char *nl = memrchr(l->buf, '\n', l->n);
    return nl ? (size_t)(nl - l->buf) + 1 : 0;
}

bool sw_std_write(sw_proc *p, sw_std_stream which, const char *data, size_t n)
{
    sw_std_line *l = p->std_line[which];
    if (!l) {
        if (!n) return true;
        if (!(l = malloc(sizeof *l))) return false;
        l->n = 0;
        p->std_line[which] = l;
    }
    bool ok = true;
    while (n > 0) {
        size_t k = SW_STD_LINE_MAX - l->n < n ? SW_STD_LINE_MAX - l->n : n;
        memcpy(l->buf + l->n, data, k);
        l->n += k;
        data += k;
        n -= k;
        if (l->n == SW_STD_LINE_MAX) { /* full: its whole lines, or a piece of one long line */
            size_t m = finished(l);
            ok = send_first(p, which, m ? m : l->n) && ok;
        }
    }
    size_t m = finished(l);
    if (m) ok = send_first(p, which, m) && ok;
    return ok;
}

bool sw_std_flush(sw_proc *p, sw_std_stream which)
{
    sw_std_line *l = p->std_line[which];
    return !l || !l->n || send_first(p, which, l->n);
}

void sw_std_proc_end(sw_proc *p)
{
    for (int i = 0; i < 2; i++) {
        if (!p->std_line[i]) continue;
        sw_std_flush(p, (sw_std_stream)i);
        free(p->std_line[i]);
        p->std_line[i] = NULL;
    }
}
