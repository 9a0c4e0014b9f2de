/* The host configuration (`--config FILE`, docs/operating.md), parsed once into a plain struct with
 * defaults; errors are reported like registry errors (file:line:col, field). */
#ifndef STEWARD_CONFIG_H
#define STEWARD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "log.h"
#include "proc_limits.h"
#include "runtime.h"

typedef struct sw_host_config {
    int64_t workers;                    /* 0: number of cores */
    bool strict_mode;                   /* security.strict_mode (true) */
    int64_t shutdown_timeout_ns;        /* shutdown.timeout (30s) */
    const char *log_format;             /* log.format: text | json, NULL: not set */
    const char *log_level;              /* log.level, NULL: not set */
    const char *log_dir;                /* log.dir: per-service files there; NULL: none */
    uint64_t log_max_size;              /* log.max_size (10MB): a file rotates before it */
    int64_t log_max_files;              /* log.max_files (5): files per service */
    int64_t log_ring_lines;             /* log.ring_lines (1000): lines per service in memory */
    uint64_t log_ring_size;             /* log.ring_size (256KB): bytes per service in memory */
    const char *control_socket;         /* control.socket, NULL: DIR/.steward.sock */
    int64_t control_idle_timeout_ns;    /* control.idle_timeout (60s) */
    int64_t control_request_timeout_ns; /* control.request_timeout (10s) */
    sw_limits limits;            /* limits.*; 0 fields: the defaults (docs/security.md "Limits") */
    bool exec_allow;             /* exec.allow (false): the exec module may start commands */
    uint64_t memory_high;        /* memory.high in bytes, or 0 (off, or a fraction) */
    double memory_high_fraction; /* memory.high as a fraction of the RAM, or 0 */
    int memory_high_line, memory_high_col; /* where memory.high was written */
    const char *metrics_listen; /* metrics.listen "HOST:PORT"; NULL: no metrics endpoint */
    void *owner;                /* keeps the parsed file alive */
} sw_host_config;

void sw_host_config_defaults(sw_host_config *c);
/* Reads path into c. 0, or -1 with every problem in diags. */
int sw_host_config_load(sw_host_config *c, const char *path, sw_diags *diags);
/* The defaults, then path if it is not NULL; errors are printed to stderr. 0, or -1 (c is
 * then freed). */
int sw_host_config_read(sw_host_config *c, const char *path);
void sw_host_config_free(sw_host_config *c);
/* What the log keeps (rings, files) as the config says. */
void sw_host_config_log_keep(const sw_host_config *c, sw_log_keep *k);
/* memory.high in bytes (a fraction taken of sw_limits_ram), 0 when off. */
uint64_t sw_host_config_memory_high(const sw_host_config *c);
/* What the runtime takes from the config: workers, strict mode, limits (libs and guard are
 * the caller's: sw_api_use). */
void sw_host_config_runtime(const sw_host_config *c, sw_runtime_config *rc);

#endif
