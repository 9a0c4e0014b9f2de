/* A process's mailbox: everything that reaches a process from outside its own thread — a
 * message, a timer firing, an exit or link event, a cancel, a kill, a monitor or link
 * request — is a delivery appended to it (any thread, under the process lock), taken by the
 * worker that runs the process, and handled there in the process's Lua state: messages
 * become message objects in the inbox channel, timer firings wake their task or channel,
 * exits, link failures and cancels become events, requests update the process's lists,
 * socket I/O (from its worker's loop, between its slices) lets its waiting tasks look.
 *
 * Bounds (docs/security.md "Limits"): a mailbox holds at most max_msgs messages and max_bytes bytes
 * (header, topic and payload); a message past either is refused ("mailbox full"), never
 * dropped. A message counts from its delivery until the process takes it from its inbox (seen
 * at the end of each slice). Other deliveries (exits, kills, cancels, timers, requests) are
 * never refused; their bytes count until they are handled. What is counted is also taken from
 * the host's memory budget, in steps, under the process lock; so is a large message's payload
 * that its message object keeps outside the heap, until the object is collected. */
#ifndef STEWARD_MAILBOX_H
#define STEWARD_MAILBOX_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_proc sw_proc;
typedef struct sw_runtime sw_runtime;

/* Host calls that run in a process of their own (funcs.call): the caller spawns it monitored
 * and puts a callable under the monitor ref (a number) in this table of its Lua registry; the
 * EXIT then is not an event but is handed to that callable, once (mailbox.c, on_call_exit). */
#define SW_CALLS_KEY "steward.calls"

/* The `kind` of the tables process.events() yields. */
#define SW_EVENT_EXIT      "exit"
#define SW_EVENT_LINK_DOWN "link_down"
#define SW_EVENT_CANCEL    "cancel"

typedef enum sw_delivery_type {
    SW_DLV_MESSAGE, /* from, topic, payload = encoded values */
    SW_DLV_TIMER,   /* ref = timer id; failed = a ticker (keep the timer's entry) */
    SW_DLV_EXIT, /* a monitored process ended: from, ref = monitor ref, failed, payload = result */
    SW_DLV_LINK_DOWN, /* a linked process failed: from, payload = result */
    SW_DLV_CANCEL,    /* from, payload = reason */
    SW_DLV_KILL,      /* wakes a waiting process so it can die */
    SW_DLV_MONITOR,   /* from wants an EXIT when this process ends; ref = monitor ref */
    SW_DLV_DEMONITOR, /* from no longer does; ref */
    SW_DLV_LINK,      /* from links to this process */
    SW_DLV_UNLINK,
    SW_DLV_IO,   /* ref = a socket's id (net.c): something happened on it; its waiting tasks look */
    SW_DLV_HTTP, /* ref = an HTTP transfer's id (http_client.c): it finished; its task resumes */
    SW_DLV_FS,   /* ref = an fs request (fs.c): its job is done; its task resumes */
    SW_DLV_EXEC, /* ref = a command's id (exec.c): something happened; its waiting tasks look */
} sw_delivery_type;

/* One allocation holds the header, the topic and the encoded payload. */
typedef struct sw_delivery {
    struct sw_delivery *next;
    sw_delivery_type type;
    bool failed;
    uint64_t from, ref;
    const char *topic; /* points into data[], or NULL */
    const unsigned char *payload;
    size_t len;
    unsigned char data[]; /* topic (NUL-terminated) then payload */
} sw_delivery;

/* The queue itself, inside sw_proc; guarded by the process's lock. */
typedef struct sw_mailbox {
    sw_delivery *head, *tail;
    size_t msgs, bytes;         /* counted now (see above) */
    size_t taken;               /* bytes taken from the host's budget for them */
    size_t reported;            /* msgs as last added to its service's queued count */
    size_t max_msgs, max_bytes; /* the bounds, set at spawn */
} sw_mailbox;

/* The receiving side's count of what it took, kept by the thread running the process and
 * settled into the mailbox at the end of each slice. */
typedef struct sw_mailbox_out {
    const void *inbox; /* the inbox channel's userdata, once a message made it */
    uint32_t *sizes;   /* ring: bytes of each message put in the inbox, oldest first */
    size_t head, n, cap;
    size_t bytes;            /* deliveries handled since the last settlement */
    size_t held, held_taken; /* payload kept by large message objects; taken from the budget */
    int msg_mt_ref[2]; /* registry refs of the small and large messages' metatables; 0: none yet */
    uint64_t from_cached; /* the sender whose pid string msg:from() keeps (0: none) */
    int dispatch_ref;     /* registry ref of the handling function (sw_mailbox_handle); 0: none */
} sw_mailbox_out;

/* What sw_proc_send returns. */
enum { SW_SEND_OK = 0, SW_SEND_DEAD = -1, SW_SEND_FULL = -2, SW_SEND_NO_MEMORY = -3 };

/* One malloc; topic and payload may be NULL. NULL on out-of-memory. Thread: any. */
sw_delivery *sw_delivery_new(sw_delivery_type type, uint64_t from, uint64_t ref, const char *topic,
                             const unsigned char *payload, size_t len);
/* Frees a list of deliveries. */
void sw_delivery_free_list(sw_delivery *d);

/* Appends d to p's mailbox and queues p if it was waiting (a KILL also sets the vm's kill
 * flag at once). Never refused for its size. Returns false if p is dead: d is not consumed,
 * the caller frees or answers it. Thread: any. */
bool sw_proc_deliver(sw_proc *p, sw_delivery *d);
/* The same for a process's message (SW_DLV_MESSAGE), refused when it does not fit: SW_SEND_OK
 * (d consumed), SW_SEND_DEAD, SW_SEND_FULL (p's bounds) or SW_SEND_NO_MEMORY (the host's
 * memory cap); d is not consumed then. Thread: any. */
int sw_proc_send(sw_proc *p, sw_delivery *d);
/* Delivers d to the process `to`. 0, or -1 if no such process lives (d is freed, except that
 * monitor and link requests are answered at once as if the process had just died).
 * Thread: any. */
int sw_runtime_deliver(sw_runtime *rt, uint64_t to, sw_delivery *d);

/* Moves everything queued to the end of p->pending and clears `waiting`. Returns false if p
 * is dead (nothing is taken). Thread: the worker running p. */
bool sw_mailbox_take(sw_proc *p);
/* Handles p->pending in order, protected, in p's Lua state: 0, or a Lua error status (the
 * memory limit) with the error on the stack. What is left after an error stays in p->pending,
 * freed when the process ends. Thread: the worker running p. */
int sw_mailbox_handle(sw_proc *p);
/* At the end of a slice: settles what p took from its inbox into its mailbox's counts, then
 * marks p waiting unless it has ready tasks or new deliveries, so the next delivery queues it
 * again. Returns true if it must run again now. Thread: the worker running p. */
bool sw_mailbox_park(sw_proc *p, bool ready);
/* At the end: gives back everything the mailbox took from the host's budget; nothing is
 * counted from now on. Call with p's lock held, once p is dead. */
void sw_mailbox_close(sw_proc *p);
/* Frees the receiving side's ring and gives back what message objects held. After the state
 * is closed. Thread: the one freeing p's state. */
void sw_mailbox_out_free(sw_proc *p);

/* Pushes a message object of p (L is p's state) that takes ownership of d (freed when
 * collected): msg:topic(), msg:from(), msg:data(), msg:payload() (message_object.c). */
void sw_message_push(sw_proc *p, lua_State *L, sw_delivery *d);
/* A large message object's delivery, kept outside the heap until the object is collected: held
 * in the host's memory budget from the push, released by its finalizer. Thread: p's. */
void sw_mailbox_hold(sw_proc *p, const sw_delivery *d);
void sw_mailbox_release(sw_proc *p, const sw_delivery *d);

#endif
