/* Cross-thread wake-ups on an eventfd watched by uv_poll. */
#include "wake.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void on_readable(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    sw_wake *w = h->data;
    uint64_t n;
    while (read(w->fd, &n, sizeof n) < 0 && errno == EINTR) {
    }
    /* cleared before the callback takes the queue: a send racing with it writes again */
    atomic_store(&w->pending, 0);
    if (w->cb) w->cb(w);
}

int sw_wake_init(uv_loop_t *loop, sw_wake *w, sw_wake_cb cb)
{
    w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->fd < 0) return -1;
    atomic_init(&w->pending, 0);
    w->cb = cb;
    if (uv_poll_init(loop, &w->poll, w->fd) != 0) {
        close(w->fd);
        return -1;
    }
    w->poll.data = w;
    uv_poll_start(&w->poll, UV_READABLE, on_readable);
    return 0;
}

void sw_wake_send(sw_wake *w)
{
    if (!atomic_exchange(&w->pending, 1)) sw_wake_signal(w);
}

void sw_wake_signal(sw_wake *w)
{
    uint64_t one = 1;
    while (write(w->fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

static void on_closed(uv_handle_t *h)
{
    sw_wake *w = h->data;
    close(w->fd); /* only now: libuv may touch the fd until the handle is closed */
    if (w->closed) w->closed(h);
}

void sw_wake_close(sw_wake *w, uv_close_cb closed)
{
    w->closed = closed;
    uv_close((uv_handle_t *)&w->poll, on_closed);
}
