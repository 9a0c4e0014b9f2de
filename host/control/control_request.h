/* Control protocol requests (docs/operating.md; newline-delimited JSON, one object a line):
 *   {"cmd":"status"}  {"cmd":"status","id":"app:db"}
 *   {"cmd":"start"|"stop"|"restart","id":"app:db","timeout":30}
 *   {"cmd":"reload"}  {"cmd":"reload","all":true}
 *   {"cmd":"logs","id":"app:db","lines":50,"since":300,"follow":true}
 * A line is read as strict JSON (json.h, on Jansson: no comments, no YAML, valid UTF-8,
 * duplicate keys and nesting over SW_CTL_MAX_DEPTH refused); then checked strictly: an
 * object, known fields of the right types only. Pure: no I/O, any thread. */
#ifndef STEWARD_CONTROL_REQUEST_H
#define STEWARD_CONTROL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

/* The longest request line accepted, newline excluded. */
#define SW_CTL_MAX_LINE        4096
/* The deepest nesting of arrays and objects a request may hold. */
#define SW_CTL_MAX_DEPTH       64
/* How long start/stop/restart wait for the services to settle when the request names no timeout. */
#define SW_CTL_DEFAULT_TIMEOUT 60.0

/* How many lines `logs` sends when the request names no number, and the most it may ask. */
#define SW_CTL_LOGS_LINES     50
#define SW_CTL_LOGS_MAX_LINES 1000000

typedef enum {
    SW_CTL_STATUS,
    SW_CTL_START,
    SW_CTL_STOP,
    SW_CTL_RESTART,
    SW_CTL_RELOAD,
    SW_CTL_LOGS
} sw_ctl_cmd;

typedef struct sw_ctl_request {
    sw_ctl_cmd cmd;
    char *id;       /* malloc'd; NULL when not given */
    bool all;       /* reload: restart every service (as SIGUSR2) */
    double timeout; /* start/stop/restart: seconds to wait for the outcome */
    size_t lines;   /* logs: the last this many */
    double since;   /* logs: only records of the last this many seconds; 0: any */
    bool follow;    /* logs: then every new record, until the client closes */
} sw_ctl_request;

/* Parses one line (without its newline). 0, or -1 with a message in err; out needs
 * sw_ctl_request_free either way. */
int sw_ctl_request_parse(const char *line, size_t len, sw_ctl_request *out, char *err,
                         size_t errlen);
void sw_ctl_request_free(sw_ctl_request *r);
const char *sw_ctl_cmd_name(sw_ctl_cmd cmd);

#endif
