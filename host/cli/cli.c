/* Argument parsing and help texts. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

const char *const sw_version = STEWARD_VERSION; /* project(VERSION) in CMakeLists.txt */

typedef struct command_help {
    const char *name, *synopsis, *text;
    int positionals; /* 0 none, 1 DIR, 2 ID (optional DIR after), 3 optional ID */
} command_help;

static const command_help commands[] = {
    {"run", "steward run DIR [-x ID [ARGS...]]",
     "Run the app in the foreground, or with -x run one process.lua to completion\nand exit with "
     "its code.",
     1},
    {"check", "steward check DIR",
     "Validate the registry; print every error (file:line:col, entry, field).\nExit 0 when valid, "
     "2 otherwise.",
     1},
    {"graph", "steward graph DIR [--format text|dot|mermaid] [--why]",
     "Print the service dependency graph; text shows start levels, --why the\nfield each edge "
     "comes from.",
     1},
    {"status", "steward status [ID] [--json] [--control PATH] [DIR]",
     "Ask a running host for the state of its services.", 3},
    {"start", "steward start ID [--control PATH] [DIR]",
     "Start a service (and what it depends on) in a running host.", 2},
    {"stop", "steward stop ID [--control PATH] [DIR]",
     "Stop a service (and what depends on it) in a running host.", 2},
    {"restart", "steward restart ID [--control PATH] [DIR]",
     "Restart a service, then its dependents.", 2},
    {"reload", "steward reload [--all] [--control PATH] [DIR]",
     "Reload the registry of a running host (same as SIGHUP); --all restarts every\nservice (same "
     "as SIGUSR2).",
     1},
    {"help", "steward help [COMMAND]", "Show help for a command.", 3},
    {"version", "steward version", "Print the version.", 0},
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static const command_help *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

void sw_cli_usage(const char *command, bool to_stderr)
{
    FILE *out = to_stderr ? stderr : stdout;
    const command_help *c = command ? find_command(command) : NULL;
    if (c) {
        fprintf(out, "usage: %s\n\n%s\n", c->synopsis, c->text);
        return;
    }
    fprintf(out, "usage: steward COMMAND [OPTIONS] [DIR]\n\nCommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(out, "  %s\n", commands[i].synopsis);
    fprintf(out, "\nOptions (after the command):\n"
                 "  --log-format text|json   log format (default text)\n"
                 "  --log-level LEVEL        debug, info, warn or error (default info)\n"
                 "  --config FILE            host configuration (YAML)\n"
                 "  --control PATH           control socket of a running host\n"
                 "  --help, --version\n");
}

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

static bool is(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0) return true;
    return false;
}

static const char *const control_commands[] = {"status",  "start",  "stop",
                                               "restart", "reload", NULL};

/* Options that take a value and belong to command c; the slot to fill, or NULL. */
static const char **value_option(sw_cli *o, const command_help *c, const char *name)
{
    if (strcmp(name, "--log-format") == 0) return &o->log_format;
    if (strcmp(name, "--log-level") == 0) return &o->log_level;
    if (strcmp(name, "--config") == 0) return &o->config;
    if (strcmp(name, "--format") == 0 && strcmp(c->name, "graph") == 0) return &o->format;
    if (strcmp(name, "--control") == 0 && is(c->name, control_commands)) return &o->control;
    return NULL;
}

static const char *const known_options[] = {"--format",  "--why", "--json",
                                            "--control", "--all", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"debug", "info", "warn", "warning", "error", NULL};

static int positional(sw_cli *o, const command_help *c, const char *word, char *err, size_t errlen)
{
    if (c->positionals == 2 || c->positionals == 3) {
        /* status takes [ID] [DIR]: an id has a colon, a directory does not. */
        bool dir_word = strcmp(c->name, "status") == 0 && !strchr(word, ':');
        if (!o->id && !dir_word) {
            o->id = word;
            return 0;
        }
        if (c->positionals == 2 && !o->dir) {
            o->dir = word;
            return 0;
        }
        if (c->positionals == 3 && strcmp(c->name, "status") == 0 && !o->dir) {
            o->dir = word;
            return 0;
        }
    } else if (c->positionals == 1 && !o->dir) {
        o->dir = word;
        return 0;
    }
    return fail(err, errlen, "unexpected argument \"%s\"", word);
}

int sw_cli_parse(int argc, char **argv, sw_cli *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (argc < 2) return fail(err, errlen, "%s", "missing command");
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        o->command = "help";
        return 0;
    }
    if (strcmp(first, "--version") == 0) {
        o->command = "version";
        return 0;
    }
    const command_help *c = find_command(first);
    if (!c)
        return fail(err, errlen,
                    first[0] == '-' ? "unknown option \"%s\"" : "unknown command \"%s\"", first);
    o->command = c->name;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        char name[64];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL; /* --opt=value */
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const char **slot = value_option(o, c, name);
        if (slot) {
            if (eq) *slot = eq + 1;
            else if (i + 1 >= argc) return fail(err, errlen, "option %s needs a value", a);
            else *slot = argv[++i];
        } else if (strcmp(a, "--why") == 0 && strcmp(c->name, "graph") == 0) o->why = true;
        else if (strcmp(a, "--json") == 0 && strcmp(c->name, "status") == 0) o->json = true;
        else if (strcmp(a, "--all") == 0 && strcmp(c->name, "reload") == 0) o->all = true;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->id = o->command;
            o->command = "help";
            return 0;
        } else if (strcmp(a, "-x") == 0 && strcmp(c->name, "run") == 0) {
            if (i + 1 >= argc) return fail(err, errlen, "%s", "-x needs an entry id");
            o->exec_id = argv[i + 1];
            o->exec_argc = argc - i - 2;
            o->exec_argv = argv + i + 2;
            break;
        } else if (is(name, known_options)) {
            snprintf(err, errlen, "option %s does not apply to %s", name, c->name);
            return -1;
        } else if (a[0] == '-' && a[1]) return fail(err, errlen, "unknown option \"%s\"", a);
        else if (positional(o, c, a, err, errlen) != 0) return -1;
    }
    if (o->format && strcmp(o->format, "text") && strcmp(o->format, "dot") &&
        strcmp(o->format, "mermaid"))
        return fail(err, errlen, "unknown graph format \"%s\" (text, dot or mermaid)", o->format);
    if (o->log_format && !is(o->log_format, log_formats))
        return fail(err, errlen, "unknown log format \"%s\" (text or json)", o->log_format);
    if (o->log_level && !is(o->log_level, log_levels))
        return fail(err, errlen, "unknown log level \"%s\" (debug, info, warn or error)",
                    o->log_level);
    if (c->positionals == 1 && !o->dir && strcmp(c->name, "reload") != 0)
        return fail(err, errlen, "%s needs an app directory", c->name);
    if (c->positionals == 2 && !o->id) return fail(err, errlen, "%s needs a service id", c->name);
    if (strcmp(c->name, "help") == 0 && o->id && !find_command(o->id))
        return fail(err, errlen, "no help for \"%s\": unknown command", o->id);
    return 0;
}
