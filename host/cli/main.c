/* steward: parse the command line and dispatch. The only place that decides exit codes. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int main(int argc, char **argv)
{
    signal(SIGPIPE,
           SIG_IGN); /* a closed stdout/stderr is an error to report, not a reason to die */
    sw_cli cli;
    char err[256];
    if (sw_cli_parse(argc, argv, &cli, err, sizeof err) != 0) {
        fprintf(stderr, "steward: %s\n\n", err);
        sw_cli_usage(cli.command, true);
        return 2;
    }
    if (strcmp(cli.command, "help") == 0) {
        sw_cli_usage(cli.id, false);
        return 0;
    }
    if (strcmp(cli.command, "version") == 0) {
        printf("steward %s\n", sw_version);
        return 0;
    }
    if (strcmp(cli.command, "check") == 0) return sw_cmd_check(&cli);
    if (strcmp(cli.command, "graph") == 0) return sw_cmd_graph(&cli);
    if (strcmp(cli.command, "schema") == 0) return sw_cmd_schema(&cli);
    if (strcmp(cli.command, "init") == 0) return sw_cmd_init(&cli);
    if (strcmp(cli.command, "run") == 0) return sw_cmd_run(&cli);
    if (strcmp(cli.command, "test") == 0) return sw_cmd_test(&cli);
    if (strcmp(cli.command, "logs") == 0) return sw_cmd_logs(&cli);
    return sw_cmd_control(&cli);
}
