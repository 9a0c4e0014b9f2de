/* Deliveries: one allocation each. */
#include "delivery.h"

#include <stdlib.h>
#include <string.h>

sw_delivery *sw_delivery_new(sw_delivery_type type, uint64_t from, uint64_t ref, const char *topic,
                             const unsigned char *payload, size_t len)
{
    size_t tlen = topic ? strlen(topic) + 1 : 0;
    sw_delivery *d = malloc(sizeof *d + tlen + len);
    if (!d) return NULL;
    d->next = NULL;
    d->type = type;
    d->failed = false;
    d->from = from;
    d->ref = ref;
    d->topic = NULL;
    if (tlen) {
        memcpy(d->data, topic, tlen);
        d->topic = (const char *)d->data;
    }
    d->payload = d->data + tlen;
    d->len = len;
    if (len) memcpy(d->data + tlen, payload, len);
    return d;
}
