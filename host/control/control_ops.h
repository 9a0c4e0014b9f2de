/* What the control socket's requests do to the supervisor, and their replies as JSON values
 * (json.h). Status and reload answer at once; start, stop and restart are asynchronous in the
 * supervisor, so the reply waits (as `systemctl start` does) until the services involved have
 * settled or the request's timeout passes. Thread: the loop's. */
#ifndef STEWARD_CONTROL_OPS_H
#define STEWARD_CONTROL_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "control_request.h"
#include "json.h"
#include "supervisor.h"

/* The services an operation waits for are kept by id (a reload may replace the supervisor's
 * services while it waits), with the index where each was last seen as a fast path. */
typedef struct sw_ctl_op {
    sw_ctl_request req;
    char **ids;     /* the services named by the request (ids[0], or every member of a named
                       group: ids[0 .. n_named)), then the others involved */
    size_t n_named; /* 1 for a service; a group's members */
    bool group;     /* the request named a service.group */
    size_t *at;     /* last seen index in s->svcs of each */
    size_t n_ids;
    uint64_t deadline; /* uv_hrtime */
    uint64_t reloads;  /* reload under validation: the supervisor's count of ended reloads when it
                          began (the reply comes when that count grows) */
} sw_ctl_op;

/* What sw_ctl_op_begin did with a request. */
typedef enum {
    SW_CTL_ANSWERED,   /* the reply is in *reply (a new reference; NULL when memory ran out) */
    SW_CTL_WAITING,    /* the operation is under way: call sw_ctl_op_poll until it answers */
    SW_CTL_STATUS_ALL, /* a status of every service: the caller answers with the status
                          document (sw_ctl_status_all), which it may share between requests */
    SW_CTL_LOGS_READ,  /* logs (its id, if any, names a service): the caller answers from the
                          log's rings (control_logs.h) */
} sw_ctl_begun;

/* Handles one request line. The op needs sw_ctl_op_free whatever the outcome. */
sw_ctl_begun sw_ctl_op_begin(sw_ctl_op *op, sw_supervisor *s, const char *line, size_t len,
                             json_t **reply);
/* true with the reply in *reply (as above) once the services settled or the deadline passed. */
bool sw_ctl_op_poll(sw_ctl_op *op, sw_supervisor *s, json_t **reply);
void sw_ctl_op_free(sw_ctl_op *op);
/* {"ok":false,"error":msg}: a new reference, NULL when memory runs out. */
json_t *sw_ctl_error_reply(const char *msg);

#endif
