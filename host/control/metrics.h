/* The metrics endpoint (docs/operating.md "Metrics"): `metrics.listen` of the host config, a
 * TCP listener on the supervisor's libuv loop answering `GET /metrics` with the Prometheus
 * text of metrics_text.h, one request per connection, parsed with http-parser. Bounded: at
 * most SW_METRICS_MAX_CONNS connections (more wait in the kernel's backlog), each closed
 * SW_METRICS_TIMEOUT_MS after it was accepted, requests over SW_METRICS_MAX_REQUEST bytes
 * refused; 404 for another path, 405 for another method. Thread: the loop's. */
#ifndef STEWARD_METRICS_H
#define STEWARD_METRICS_H

#include <stddef.h>

#include "net.h"
#include "supervisor.h"

#define SW_METRICS_MAX_CONNS   16
#define SW_METRICS_TIMEOUT_MS  5000
#define SW_METRICS_MAX_REQUEST 8192

typedef struct sw_metrics sw_metrics;

/* Parses metrics.listen, "HOST:PORT" (a numeric IPv4 address, "[IPv6]" or localhost; port
 * 0-65535, 0: any free one), into a. 0, or -1 with a message in err. Pure. */
int sw_metrics_parse_listen(const char *listen, sw_net_addr *a, char *err, size_t errlen);
/* Listens on `listen` for s and logs "metrics listening" with the address bound (its port
 * resolved). NULL with a message in err (a bad address, bind fails). */
sw_metrics *sw_metrics_open(sw_supervisor *s, const char *listen, char *err, size_t errlen);
/* Closes every connection and the listener and frees m (NULL: nothing). Call after the loop
 * has stopped; it runs the loop just enough to close. */
void sw_metrics_close(sw_metrics *m);

#endif
