/* Process timers on the workers' libuv loops (see timer.h). */
#include "timer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "mailbox.h"
#include "proc.h"
#include "worker.h"

struct sw_timer {
    uv_timer_t handle; /* first: uv callbacks get the handle pointer */
    sw_runtime *rt;
    uint64_t pid, id;
    bool repeat;
    atomic_bool stopped;
};

double sw_time_now(void) { return (double)uv_hrtime() / 1e9; }

uint64_t sw_timer_id(const sw_timer *t) { return t->id; }

void sw_timer_stop(sw_timer *t) { atomic_store(&t->stopped, true); }

static void timer_closed(uv_handle_t *h) { free(h); }

static void timer_fired(uv_timer_t *h)
{
    sw_timer *t = (sw_timer *)h;
    sw_delivery *d =
        atomic_load(&t->stopped) ? NULL : sw_delivery_new(SW_DLV_TIMER, 0, t->id, NULL, NULL, 0);
    if (d) d->failed = t->repeat; /* tells the process to keep the timer's entry */
    bool alive = d && sw_runtime_deliver(t->rt, t->pid, d) == 0;
    if (!alive || !t->repeat) {
        uv_timer_stop(h);
        uv_close((uv_handle_t *)h, timer_closed);
    }
}

sw_timer *sw_timer_start(sw_proc *p, int64_t ns, bool repeat)
{
    sw_worker *w = sw_worker_current();
    sw_timer *t = w ? calloc(1, sizeof *t) : NULL;
    if (!t) return NULL;
    t->rt = p->rt;
    t->pid = p->id;
    t->id = sw_proc_new_ref(p);
    t->repeat = repeat;
    atomic_init(&t->stopped, false);
    /* libuv times from the loop's cached clock: whole ms, read at the last uv_run (a busy
     * worker polls its loop only every few slices) and maybe from a coarse clock. Refresh it
     * and add how far it lags time.now()'s clock, so a timer never fires early. */
    uv_update_time(&w->loop);
    uint64_t hr = uv_hrtime(), cached = uv_now(&w->loop) * 1000000;
    uint64_t lag = hr > cached ? hr - cached : 0;
    uint64_t ms = (uint64_t)((ns + 999999) / 1000000);
    uint64_t first = (uint64_t)(((uint64_t)ns + lag + 999999) / 1000000);
    uv_timer_init(&w->loop, &t->handle);
    uv_timer_start(&t->handle, timer_fired, first, repeat ? (ms ? ms : 1) : 0);
    return t;
}
