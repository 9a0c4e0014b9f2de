/* `logs` requests and their followers (see control_logs.h): the reply read from the log's
 * rings, and the new records each follower is sent, fed from the rings on a wake-up of the
 * control loop, as far as its queue allows. Part of the control socket (control_internal.h). */
#include "control_internal.h"
#include "log_ring.h"

/* A logs request: the reply from the rings; a follower reads no more requests, and has no
 * idle timeout (it waits for lines). */
void ctl_answer_logs(ctl_conn *k)
{
    sw_control *c = k->ctl;
    if (!c->ring) {
        ctl_send_error(k, "this host keeps no log lines (log.ring_lines is 0)");
        return;
    }
    char *text;
    size_t len;
    if (sw_ctl_logs_read(c->ring, &k->op.req, &text, &len, &k->follow) != 0) {
        ctl_send_error(k, "out of memory");
        return;
    }
    ctl_send_lines(k, text, len);
    if (k->follow) uv_timer_stop(&k->timer);
}

/* Bytes of lines that may still wait for follower k. */
static size_t follow_room(const ctl_conn *k)
{
    return k->queued < SW_CTL_FOLLOW_QUEUE ? SW_CTL_FOLLOW_QUEUE - k->queued : 0;
}

/* A follower's lines were written: tell it of the lines it lost, if any. */
void ctl_follow_caught_up(ctl_conn *k)
{
    if (!k->follow->dropped || k->queued > SW_CTL_FOLLOW_QUEUE / 2) return;
    char *text;
    size_t len;
    sw_ctl_follow_batch(k->follow, NULL, 0, follow_room(k), &text, &len);
    ctl_send_lines(k, text, len);
}

/* The rings' feed has records: each follower gets those it wants, as far as its queue allows. */
void ctl_on_feed(sw_wake *w)
{
    sw_control *c = w->data;
    uint64_t lost;
    sw_log_rec *list = sw_log_ring_take_feed(c->ring, &lost);
    for (ctl_conn *k = c->conns, *next; k; k = next) {
        next = k->next;
        if (!k->follow || k->closing) continue;
        char *text;
        size_t len;
        sw_ctl_follow_batch(k->follow, list, lost, follow_room(k), &text, &len);
        ctl_send_lines(k, text, len);
    }
    for (sw_log_rec *r = list, *next; r; r = next) {
        next = r->feed_next;
        sw_log_rec_release(r);
    }
}

void ctl_wake_feed(void *arg) { sw_wake_send(arg); }

void ctl_on_feed_closed(uv_handle_t *h)
{
    sw_wake *w = h->data;
    sw_control *c = w->data;
    c->open_handles--;
}
