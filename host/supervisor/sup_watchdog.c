/* The watchdog (docs/supervision.md "Watchdog", systemd's WatchdogSec=): a running service
 * with lifecycle.watchdog must call service.alive() at least that often, from any process of
 * its tree. A ping is one relaxed store of the monotonic clock in the service's count
 * (proc_limits.h), so nothing here runs per ping: one timer per service fires at the deadline
 * the last ping it saw allows, re-arms itself past a newer ping, and fails the run when there
 * was none ("watchdog timeout"; the restart policy judges the end, the tree stops as for any
 * end). Every function runs on the supervisor's loop thread. */
#include <stdlib.h>

#include "service.h"
#include "sup_internal.h"
#include "units.h"

static int64_t watchdog_of(const sw_svc *v) { return v->entry->as.service.lifecycle.watchdog_ns; }

/* The latest sign of life of the current run: its last ping, or when it became running. */
static uint64_t last_alive(const sw_svc *v)
{
    uint64_t ping = v->tree ? atomic_load_explicit(&v->tree->alive_ns, memory_order_relaxed) : 0;
    return ping > v->live.since ? ping : v->live.since;
}

double sw_svc_alive_age(const sw_svc *v, uint64_t now_hr)
{
    if (!watchdog_of(v) || !v->live.since || sw_svc_state_of(v) != SW_SVC_RUNNING) return -1;
    uint64_t last = last_alive(v);
    return now_hr > last ? (double)(now_hr - last) / 1e9 : 0;
}

static void log_timeout(sw_svc *v, uint64_t now)
{
    sw_log_field f[2] = {
        {.key = "watchdog", .type = SW_LF_NUM, .d = (double)watchdog_of(v) / 1e9},
        {.key = "last_alive", .type = SW_LF_NUM, .d = (double)(now - last_alive(v)) / 1e9}};
    sw_log_write(v->sup->log, SW_LOG_WARN, v->entry->id, "watchdog timeout", f, 2);
}

/* Entry point: a deadline. A ping since it was armed moves the deadline on; none fails the run. */
static void watchdog_fired(uv_timer_t *t)
{
    sw_svc *v = t->data;
    if (!v->pid || v->sub != SW_SUB_RUNNING) return;
    uint64_t now = uv_hrtime(), deadline = last_alive(v) + (uint64_t)watchdog_of(v);
    if (now < deadline) {
        sup_arm(&v->live.watchdog, watchdog_fired, (int64_t)(deadline - now));
        return;
    }
    log_timeout(v, now);
    svc_fail_run(v, "watchdog timeout");
    sup_settle(v->sup);
}

void svc_watchdog_arm(sw_svc *v)
{
    if (!watchdog_of(v) || v->sub != SW_SUB_RUNNING) return;
    v->live.since = uv_hrtime();
    sup_arm(&v->live.watchdog, watchdog_fired, watchdog_of(v));
}

/* ---- the liveness timers' lifetime (both files') ---- */

void svc_liveness_init(sw_svc *v)
{
    uv_timer_init(v->sup->loop, &v->live.watchdog);
    uv_timer_init(v->sup->loop, &v->live.check_timer);
    v->live.watchdog.data = v->live.check_timer.data = v;
    v->open_handles += 2;
}

/* Closing stops the timers; a check still in flight is the runtime's to free (the runtime may
 * be gone already: nothing is killed here). */
void svc_liveness_close(sw_svc *v, uv_close_cb closed)
{
    uv_close((uv_handle_t *)&v->live.watchdog, closed);
    uv_close((uv_handle_t *)&v->live.check_timer, closed);
}
