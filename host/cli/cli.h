/* Command-line parsing (docs/operating.md): the command, its options (before or after DIR) and, after
 * `-x ID`, the words passed to the process. Pure: no I/O beyond what the caller prints. */
#ifndef STEWARD_CLI_H
#define STEWARD_CLI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sw_cli {
    const char
        *command; /* run, check, graph, status, start, stop, restart, reload, logs, help, version */
    const char *dir;    /* app directory */
    const char *id;     /* start/stop/restart/status ID, or the help topic */
    const char *format; /* graph: text | dot | mermaid */
    bool why, json;
    bool all;                  /* reload --all: restart every service (as SIGUSR2) */
    const char *lines, *since; /* logs -n N, --since DURATION (checked) */
    bool follow;               /* logs -f */
    bool watch;                /* run --watch: reload when a YAML or Lua file under dir changes */
    const char *log_format, *log_level, *config, *control;
    const char *exec_id; /* run -x ID */
    int exec_argc;
    char **exec_argv;
} sw_cli;

/* 0 on success; -1 with a message in err (the caller prints usage and exits 2). */
int sw_cli_parse(int argc, char **argv, sw_cli *out, char *err, size_t errlen);
void sw_cli_usage(const char *command, bool to_stderr);
extern const char *const sw_version;

#endif
