/* sd_notify without libsystemd: when NOTIFY_SOCKET is set (a path, or "@name" for an abstract
 * socket), lifecycle states are sent to it as datagrams, so Steward runs under systemd
 * Type=notify. Thread: any single caller at a time (the loop's thread). */
#ifndef STEWARD_NOTIFY_H
#define STEWARD_NOTIFY_H

#include <stdint.h>

#include "log.h"

typedef struct sw_notify sw_notify;

/* From the environment; NULL when NOTIFY_SOCKET is unset or unusable (logged as a warning). */
sw_notify *sw_notify_from_env(sw_log *log);
/* Sends state ("READY=1", "STOPPING=1", "RELOADING=1"). The same state twice in a row is
 * sent once, so the supervisor and the control socket may both announce a reload.
 * RELOADING=1 carries MONOTONIC_USEC as systemd's Type=notify-reload wants.
 * Signature fits sw_supervisor.notify; n may be NULL (no-op). */
void sw_notify_send(void *n, const char *state);
void sw_notify_free(sw_notify *n);
/* systemd's watchdog (WatchdogSec=): the interval from WATCHDOG_USEC in ns when it is set and
 * WATCHDOG_PID, if set, names this process; else 0. The host pings at half of it. */
int64_t sw_notify_watchdog_ns(void);
/* Sends WATCHDOG=1 (n may be NULL: no-op). */
void sw_notify_watchdog(sw_notify *n);

#endif
