/* A delivery: anything that arrives in a process's mailbox from outside its own thread —
 * a message, a timer firing, an exit or link event, a cancel, a kill, a monitor or link
 * request. One allocation holds the header, the topic and the encoded payload. */
#ifndef STEWARD_DELIVERY_H
#define STEWARD_DELIVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sw_delivery_type {
    SW_DLV_MESSAGE,     /* from, topic, payload = encoded values */
    SW_DLV_TIMER,       /* ref = timer id */
    SW_DLV_EXIT,        /* a monitored process ended: from, ref = monitor ref, failed, payload = result */
    SW_DLV_LINK_DOWN,   /* a linked process failed: from, payload = result */
    SW_DLV_CANCEL,      /* from, payload = reason */
    SW_DLV_KILL,        /* wakes a waiting process so it can die */
    SW_DLV_MONITOR,     /* from wants an EXIT when this process ends; ref = monitor ref */
    SW_DLV_DEMONITOR,   /* from no longer does; ref */
    SW_DLV_LINK,        /* from links to this process */
    SW_DLV_UNLINK,
} sw_delivery_type;

typedef struct sw_delivery {
    struct sw_delivery *next;
    sw_delivery_type type;
    bool failed;
    uint64_t from, ref;
    const char *topic;          /* points into data[], or NULL */
    const unsigned char *payload;
    size_t len;
    unsigned char data[];       /* topic (NUL-terminated) then payload */
} sw_delivery;

/* One malloc; topic and payload may be NULL. NULL on out-of-memory. */
sw_delivery *sw_delivery_new(sw_delivery_type type, uint64_t from, uint64_t ref, const char *topic,
                             const unsigned char *payload, size_t len);

#endif
