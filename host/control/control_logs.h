/* The `logs` request (docs/operating.md, "logs"): its reply, read from the log's rings
 * (log_ring.h), and what a follower is sent afterwards. A reply is the line
 * {"ok":true,"lines":N} and then N record lines (JSON log records, oldest first); a follower
 * then gets each new record as a line, and where it lost lines (its queue full, or the feed)
 * a record of its own first: {"ts":…,"level":"warn","msg":"N lines dropped","dropped":N}.
 * Thread: the control loop's. */
#ifndef STEWARD_CONTROL_LOGS_H
#define STEWARD_CONTROL_LOGS_H

#include <stddef.h>
#include <stdint.h>

#include "control_request.h"
#include "log_ring.h"

/* The most bytes of lines that may wait for one follower to read them; past it, lines are
 * dropped for that follower (and counted), never queued. */
#define SW_CTL_FOLLOW_QUEUE ((size_t)256 << 10)

typedef struct sw_ctl_follow {
    char *service;    /* NULL: every service and the host */
    uint64_t after;   /* feed records with a higher sequence number are new to it */
    uint64_t dropped; /* lines it lost and was not told of yet */
} sw_ctl_follow;

/* The reply to a logs request as text (malloc'd, *len bytes, ended by a newline): 0, or -1
 * when memory runs out. With req->follow, *follow is the new follower (ring counts it: free it
 * with sw_ctl_follow_free). */
int sw_ctl_logs_read(sw_log_ring *ring, const sw_ctl_request *req, char **text, size_t *len,
                     sw_ctl_follow **follow);
/* What to send f of the feed's records (list, linked by feed_next) when `room` bytes may still
 * wait for it: its new records that fit, after a drop marker if it lost some (lost_too more
 * records were lost by the feed itself); malloc'd into *text, *len bytes (0: nothing). */
void sw_ctl_follow_batch(sw_ctl_follow *f, const sw_log_rec *list, uint64_t lost_too, size_t room,
                         char **text, size_t *len);
void sw_ctl_follow_free(sw_log_ring *ring, sw_ctl_follow *f);

#endif
