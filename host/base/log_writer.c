/* The log's writer (log_writer.h): a bounded byte ring (a bip buffer: lines are never split
 * at the wrap, so each line stays contiguous) drained by one thread, or direct writes by the
 * caller. The lock guards the ring's indexes, the counters and the thread's state; the thread
 * writes a region of the ring without it, and producers never touch that region (they only
 * fill free space). The thread allows cancellation only inside its write(), so a shutdown
 * that gives up on a stuck reader cancels it there, with no lock held. */
#include "log_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOTICE_MAX  512 /* the drop notice's line is shorter */
/* Woken for a new line, the thread waits this long before writing, so that a burst goes out
 * in one write() and its writers do not each pay for a wake-up (a futex call that cost as much
 * as the line's own write to /dev/null in bench_log). Lines are written at most this late. */
#define COALESCE_NS 200000

struct sw_log_writer {
    FILE *out;
    int fd; /* -1: a FILE without a descriptor (written with fwrite) */
    bool buffered;
    /* the ring: data in [r, w) or, wrapped, in [r, e) then [0, w) */
    char *ring;
    size_t cap, r, w, e, used;
    bool wrapped;
    bool writing;        /* the thread is writing [r, r + n) without the lock */
    bool waiting;        /* the thread sleeps on `wake` */
    bool stopping;       /* sw_log_writer_free asked the thread to finish */
    bool done;           /* the thread has left its loop */
    bool healthy;        /* the last write succeeded */
    int64_t deadline;    /* the next tick, 0 for none */
    uint64_t unreported; /* drops the notice has not told yet */
    sw_log_writer_stats stats;
    sw_log_notice_fn notice;
    sw_log_tick_fn tick;
    sw_log_sink_fn sink;
    void *arg;
    pthread_mutex_t lock;
    pthread_cond_t wake, idle; /* idle: the thread has nothing to write (or is done) */
    pthread_t thread;
    bool has_thread;
};

int64_t sw_log_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec abs_time(int64_t ns)
{
    return (struct timespec){.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
}

/* ---- the ring (lock held) ---- */

static bool ring_fits(const sw_log_writer *w, size_t n)
{
    if (w->used == 0) return n <= w->cap;
    if (w->wrapped) return w->r - w->w >= n;
    return w->cap - w->w >= n || w->r >= n;
}

static bool ring_push(sw_log_writer *w, const char *p, size_t n)
{
    if (w->used == 0) w->r = w->w = 0, w->wrapped = false; /* empty: start over at 0 */
    if (!ring_fits(w, n)) return false;
    if (!w->wrapped && w->cap - w->w < n) { /* the line starts over at 0, whole */
        w->e = w->w;
        w->w = 0;
        w->wrapped = true;
    }
    memcpy(w->ring + w->w, p, n);
    w->w += n;
    w->used += n;
    return true;
}

/* The next contiguous region to write; its length (0: empty). */
static size_t ring_region(const sw_log_writer *w, const char **p)
{
    *p = w->ring + w->r;
    if (w->used == 0) return 0;
    return (w->wrapped ? w->e : w->w) - w->r;
}

static void ring_consume(sw_log_writer *w, size_t n)
{
    w->r += n;
    w->used -= n;
    if (w->wrapped && w->r == w->e) {
        w->r = 0;
        w->wrapped = false;
    }
}

/* ---- writing ---- */

static size_t count_lines(const char *p, size_t n)
{
    size_t lines = 0;
    for (const char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
    return lines;
}

/* Writes p[0..n) whole; true on success. `cancellable`: the writer thread, which may be
 * cancelled inside write() and only there. */
static bool write_all(sw_log_writer *w, const char *p, size_t n, bool cancellable)
{
    if (w->sink) return w->sink(w->arg, p, n);
    if (w->fd < 0) {
        bool ok = fwrite(p, 1, n, w->out) == n;
        return fflush(w->out) == 0 && ok;
    }
    while (n > 0) {
        if (cancellable) pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        ssize_t k = write(w->fd, p, n);
        if (cancellable) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        if (k < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Buffered: the notice goes into the ring ahead of a line of `then` bytes, when writing works
 * and both fit. Lock held. */
static void queue_notice(sw_log_writer *w, size_t then)
{
    if (!w->unreported || !w->healthy || !w->notice || !ring_fits(w, NOTICE_MAX + then)) return;
    char line[NOTICE_MAX];
    size_t n = w->notice(w->arg, w->unreported, line, sizeof line);
    if (n > 0 && ring_push(w, line, n)) w->unreported = 0;
}

/* Direct: the notice, written now; lock held. */
static void write_notice(sw_log_writer *w)
{
    if (!w->unreported || !w->notice) return;
    char line[NOTICE_MAX];
    size_t n = w->notice(w->arg, w->unreported, line, sizeof line);
    if (n > 0 && write_all(w, line, n, false)) w->unreported = 0;
}

static void drop(sw_log_writer *w, uint64_t lines)
{
    w->stats.dropped += lines;
    w->unreported += lines;
}

bool sw_log_writer_put(sw_log_writer *w, const char *line, size_t n)
{
    bool taken;
    pthread_mutex_lock(&w->lock);
    if (w->buffered) {
        queue_notice(w, n);
        taken = ring_push(w, line, n);
        if (taken) {
            w->stats.lines++;
            if (w->waiting) pthread_cond_signal(&w->wake);
        } else {
            drop(w, 1);
        }
    } else {
        if (w->healthy) write_notice(w);
        w->healthy = taken = write_all(w, line, n, false);
        if (w->healthy) {
            w->stats.lines++;
            write_notice(w); /* after the first line that got through again */
        } else {
            drop(w, 1);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return taken;
}

/* ---- the thread ---- */

/* Writes the next region of the ring; lock held on entry and exit. */
static void write_region(sw_log_writer *w)
{
    const char *p;
    size_t n = ring_region(w, &p);
    w->writing = true;
    pthread_mutex_unlock(&w->lock);
    bool ok = write_all(w, p, n, true);
    pthread_mutex_lock(&w->lock);
    w->writing = false;
    if (!ok) drop(w, count_lines(p, n));
    w->healthy = ok;
    ring_consume(w, n);
    if (w->used == 0) queue_notice(w, 0);
}

/* Lets a burst gather (COALESCE_NS); lock held on entry and exit. */
static void coalesce(sw_log_writer *w)
{
    pthread_mutex_unlock(&w->lock);
    struct timespec ts = {.tv_sec = 0, .tv_nsec = COALESCE_NS};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&w->lock);
}

static void *writer_main(void *arg)
{
    sw_log_writer *w = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_mutex_lock(&w->lock);
    for (;;) {
        if (w->used > 0) {
            write_region(w);
            continue;
        }
        pthread_cond_broadcast(&w->idle);
        if (w->stopping) break;
        int64_t now = sw_log_clock_ns();
        if (w->deadline && now >= w->deadline && w->tick) {
            w->deadline = 0;
            pthread_mutex_unlock(&w->lock);
            int64_t next = w->tick(w->arg, now);
            pthread_mutex_lock(&w->lock);
            if (next && (!w->deadline || next < w->deadline)) w->deadline = next;
            continue;
        }
        w->waiting = true;
        if (w->deadline && w->tick) {
            struct timespec ts = abs_time(w->deadline);
            pthread_cond_timedwait(&w->wake, &w->lock, &ts);
        } else {
            pthread_cond_wait(&w->wake, &w->lock);
        }
        w->waiting = false;
        if (w->used > 0 && !w->stopping) coalesce(w);
    }
    w->done = true;
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* ---- life ---- */

static void init_conds(sw_log_writer *w)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake, &attr);
    pthread_cond_init(&w->idle, &attr);
    pthread_condattr_destroy(&attr);
}

sw_log_writer *sw_log_writer_new(const sw_log_writer_config *c)
{
    sw_log_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->out = c->out ? c->out : stderr;
    w->fd = fileno(w->out);
    w->sink = c->sink;
    w->buffered = c->buffered && c->capacity > 0 && (w->fd >= 0 || w->sink);
    w->notice = c->notice;
    w->tick = c->tick;
    w->arg = c->arg;
    w->healthy = true;
    if (w->buffered) {
        w->cap = c->capacity;
        w->ring = malloc(w->cap);
        if (!w->ring) {
            free(w);
            return NULL;
        }
    }
    pthread_mutex_init(&w->lock, NULL);
    init_conds(w);
    w->has_thread = pthread_create(&w->thread, NULL, writer_main, w) == 0;
    if (w->has_thread)
        pthread_setname_np(w->thread, c->thread_name ? c->thread_name : "steward-log");
    else w->buffered = false;
    return w;
}

void sw_log_writer_wake_at(sw_log_writer *w, int64_t deadline_ns)
{
    pthread_mutex_lock(&w->lock);
    if (!w->deadline || deadline_ns < w->deadline) {
        w->deadline = deadline_ns;
        if (w->waiting) pthread_cond_signal(&w->wake);
    }
    pthread_mutex_unlock(&w->lock);
}

/* Waits (lock held) until the thread is idle, or done when `done`; false at the deadline. */
static bool wait_idle(sw_log_writer *w, int64_t deadline, bool done)
{
    struct timespec ts = abs_time(deadline);
    while (done ? !w->done : (w->used > 0 || w->writing)) {
        if (pthread_cond_timedwait(&w->idle, &w->lock, &ts) == ETIMEDOUT) return false;
    }
    return true;
}

bool sw_log_writer_flush(sw_log_writer *w, int64_t timeout_ns)
{
    if (!w->buffered) return true;
    pthread_mutex_lock(&w->lock);
    bool ok = wait_idle(w, sw_log_clock_ns() + timeout_ns, false);
    pthread_mutex_unlock(&w->lock);
    return ok;
}

sw_log_writer_stats sw_log_writer_stats_of(sw_log_writer *w)
{
    pthread_mutex_lock(&w->lock);
    sw_log_writer_stats s = w->stats;
    pthread_mutex_unlock(&w->lock);
    return s;
}

void sw_log_writer_free(sw_log_writer *w, int64_t timeout_ns)
{
    if (!w) return;
    if (w->has_thread) {
        pthread_mutex_lock(&w->lock);
        w->stopping = true;
        pthread_cond_signal(&w->wake);
        bool done = wait_idle(w, sw_log_clock_ns() + timeout_ns, true);
        pthread_mutex_unlock(&w->lock);
        if (!done) pthread_cancel(w->thread); /* stuck in write(): the rest is lost */
        pthread_join(w->thread, NULL);
    }
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->lock);
    free(w->ring);
    free(w);
}
