/* One function per CLI command; each returns the process exit code. */
#ifndef STEWARD_COMMANDS_H
#define STEWARD_COMMANDS_H

#include "cli.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "registry.h"

/* Loads dir; on errors prints them all (sorted, each once) to stderr and returns NULL. */
sw_registry *sw_load_or_report(const char *dir);
/* What run and test start from: the host's config (cli->config) into cfg and the app's
 * registry, errors reported; NULL when either fails (cfg then holds nothing to free). */
sw_registry *sw_load_host(const sw_cli *cli, sw_host_config *cfg);

int sw_cmd_check(const sw_cli *cli);
int sw_cmd_graph(const sw_cli *cli);
/* `steward schema`: the JSON Schema of registry files, from the kind tables. */
int sw_cmd_schema(const sw_cli *cli);
/* `steward init DIR`: a small working app in a new or empty directory. */
int sw_cmd_init(const sw_cli *cli);
int sw_cmd_run(const sw_cli *cli);
/* steward test DIR (cmd_test.c). */
int sw_cmd_test(const sw_cli *cli);
/* status, start, stop, restart, reload: through a running host's control socket. */
int sw_cmd_control(const sw_cli *cli);
/* logs: a running host's log lines, through its control socket. */
int sw_cmd_logs(const sw_cli *cli);

/* Exit codes of the control commands besides 0 and 1 (docs/operating.md, "Exit codes"). */
#define EXIT_UNKNOWN 4

/* The control socket: --control, else the config's control.socket, else DIR/.steward.sock,
 * else ./.steward.sock. malloc'd; NULL (message printed) when the config cannot be read. */
char *sw_cli_socket_path(const sw_cli *cli);
/* An error reply from the host: printed with its list of errors; the exit code (4 for an
 * unknown id, else 1). */
int sw_cli_report_error(const sw_cli *cli, const json_t *root);

/* The log the CLI options (else the host config) ask for: format, level; colour on a TTY
 * without NO_COLOR. cfg may be NULL. */
sw_log *sw_cli_log(const sw_cli *cli, const sw_host_config *cfg);

#endif
