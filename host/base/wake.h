/* A cross-thread wake-up for a libuv loop: any thread calls sw_wake_send; the loop's thread
 * runs the callback. Wake-ups coalesce: one is pending at most, so a burst of sends costs one
 * syscall. A caller that coalesces by a protocol of its own (the workers' sleeping flag:
 * runtime/worker_park.c) writes with sw_wake_signal instead. Used instead of uv_async_t
 * because libuv 1.44's uv_async_send leaves a window in which the woken loop busy-waits for
 * the sender: on a loaded machine the sender is often descheduled right inside it, and the
 * loop spins (31% of the restart benchmark's time). */
#ifndef STEWARD_WAKE_H
#define STEWARD_WAKE_H

#include <stdatomic.h>
#include <uv.h>

typedef struct sw_wake sw_wake;
typedef void (*sw_wake_cb)(sw_wake *w);

struct sw_wake {
    uv_poll_t poll;
    int fd;             /* an eventfd */
    atomic_int pending; /* a wake-up is written and not yet taken */
    sw_wake_cb cb;
    uv_close_cb closed;
    void *data;
};

/* 0, or -1 if no eventfd could be made. cb may be NULL (the wake-up only ends the loop's
 * wait). Thread: the loop's. */
int sw_wake_init(uv_loop_t *loop, sw_wake *w, sw_wake_cb cb);
/* Any thread. The callback runs at least once after this call, on the loop's thread; it must
 * take everything queued for it (sends during the callback wake it again). */
void sw_wake_send(sw_wake *w);
/* Any thread: writes the eventfd whether or not a wake-up is pending (one syscall each call),
 * for a caller that already made sure only one of its senders writes per wait. */
void sw_wake_signal(sw_wake *w);
/* Thread: the loop's. `closed` (may be NULL) runs when the handle is closed. */
void sw_wake_close(sw_wake *w, uv_close_cb closed);

#endif
