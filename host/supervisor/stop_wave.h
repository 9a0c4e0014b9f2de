/* Stop timeouts without a timer each (docs/supervision.md "Stopping and shutdown"): a shutdown
 * stops thousands of services in a few waves, and a timer per service cost a heap insertion and
 * removal each (a fifth of the supervisor's time). Services waiting out the same stop_timeout
 * are due in the order they were armed, so they queue in arrival order behind one timer per
 * distinct stop_timeout, armed at the earliest deadline. */
#ifndef STEWARD_STOP_WAVE_H
#define STEWARD_STOP_WAVE_H

#include <stdint.h>

typedef struct sw_svc sw_svc;
typedef struct sw_supervisor sw_supervisor;
typedef struct sup_stop_queue sup_stop_queue;

/* What runs when v's stop_timeout has run out (the caller settles once after a batch). */
typedef void (*sup_stop_fired)(sw_svc *v);

/* Arms v's stop_timeout of ns (not infinite) to run fired; an earlier one is replaced. A
 * service that cannot be queued (out of memory) is killed at once by fired. */
void sup_stop_arm(sw_svc *v, int64_t ns, sup_stop_fired fired);
/* Disarms v's stop_timeout if it is armed. */
void sup_stop_disarm(sw_svc *v);
/* Closes the queues' timers and frees them (at the supervisor's close, services disarmed). */
void sup_stop_close(sw_supervisor *s);

#endif
