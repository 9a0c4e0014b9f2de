/* Argument parsing and help texts. */
#include "cli.h"

#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "units.h"

const char *const sw_version = STEWARD_VERSION; /* project(VERSION) in CMakeLists.txt */

typedef struct command_help {
    const char *name, *synopsis, *text;
    int positionals; /* 0 none, 1 DIR, 2 ID (optional DIR after), 3 optional ID */
} command_help;

static const command_help commands[] = {
    {"run", "steward run DIR [--watch] [-x ID [ARGS...]]",
     "Run the app in the foreground, or with -x run one process.lua to completion\nand exit with "
     "its code. --watch reloads when a YAML or Lua file under DIR changes.",
     1},
    {"check", "steward check DIR [--config FILE] [--json]",
     "Validate the registry, compile every Lua source and, with --config, the host\nconfig; print "
     "every error (file:line:col, entry, field), or with --json one\nJSON document. Exit 0 when "
     "valid, 2 otherwise.",
     1},
    {"graph", "steward graph DIR [--format text|dot|mermaid] [--why] [--json]",
     "Print the service dependency graph; text shows start levels, --why the\nfield each edge "
     "comes from.",
     1},
    {"status", "steward status [ID] [--json] [--control PATH] [DIR]",
     "Ask a running host for the state of its services.", 3},
    {"top", "steward top [--control PATH] [DIR]",
     "The status table of a running host, redrawn every second; q quits.", 1},
    {"start", "steward start ID [--json] [--control PATH] [DIR]",
     "Start a service (and what it depends on) in a running host.", 2},
    {"stop", "steward stop ID [--json] [--control PATH] [DIR]",
     "Stop a service (and what depends on it) in a running host.", 2},
    {"restart", "steward restart ID [--json] [--control PATH] [DIR]",
     "Restart a service, then its dependents.", 2},
    {"reload", "steward reload [--all] [--json] [--control PATH] [DIR]",
     "Reload the registry of a running host (same as SIGHUP); --all restarts every\nservice (same "
     "as SIGUSR2).",
     1},
    {"logs", "steward logs [ID] [-n N] [-f] [--since DURATION] [--json] [--control PATH] [DIR]",
     "Print a running host's recent log lines: of one service, or of all in time\norder (the last "
     "50, or -n N); --since 5m only newer ones; -f then follows new\nlines until interrupted; "
     "--json one JSON record per line.",
     3},
    {"init", "steward init DIR",
     "Write a small working app to DIR (new or empty): two services, a dependency,\na policy, "
     "a README and a .luacheckrc.",
     1},
    {"schema", "steward schema",
     "Print the JSON Schema of registry files, for editors (yaml-language-server).", 0},
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
                 "  --log-format text|json   run: log format (default text)\n"
                 "  --log-level LEVEL        run: debug, info, warn or error (default info)\n"
                 "  --watch                  run: reload when a YAML or Lua file changes\n"
                 "  --config FILE            host configuration (YAML); not for graph\n"
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

static const char *const control_commands[] = {"status",  "top",    "start", "stop",
                                               "restart", "reload", "logs",  NULL};

/* Every option after the command: which commands it means something for (an option given to
 * another command is an error, not silently ignored) and where it goes. */
typedef enum {
    OPT_LOG_FORMAT,
    OPT_LOG_LEVEL,
    OPT_CONFIG,
    OPT_CONTROL,
    OPT_FORMAT,
    OPT_WHY,
    OPT_JSON,
    OPT_ALL,
    OPT_LINES,
    OPT_FOLLOW,
    OPT_SINCE,
    OPT_WATCH
} option_id;
typedef struct option_spec {
    const char *name;
    option_id id;
    bool takes_value;
    const char *const *commands;
} option_spec;

static const char *const run_only[] = {"run", NULL};
static const char *const graph_only[] = {"graph", NULL};
static const char *const reload_only[] = {"reload", NULL};
static const char *const logs_only[] = {"logs", NULL};
static const char *const json_commands[] = {"status", "check", "start", "stop", "restart",
                                            "reload", "graph", "logs",  NULL};
static const char *const config_commands[] = {"run",  "check",   "status", "top",  "start",
                                              "stop", "restart", "reload", "logs", NULL};

static const option_spec options[] = {
    {"--log-format", OPT_LOG_FORMAT, true, run_only},
    {"--log-level", OPT_LOG_LEVEL, true, run_only},
    {"--config", OPT_CONFIG, true, config_commands},
    {"--control", OPT_CONTROL, true, control_commands},
    {"--format", OPT_FORMAT, true, graph_only},
    {"--why", OPT_WHY, false, graph_only},
    {"--json", OPT_JSON, false, json_commands},
    {"--all", OPT_ALL, false, reload_only},
    {"-n", OPT_LINES, true, logs_only},
    {"-f", OPT_FOLLOW, false, logs_only},
    {"--since", OPT_SINCE, true, logs_only},
    {"--watch", OPT_WATCH, false, run_only},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static const option_spec *find_option(const char *name)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (strcmp(options[i].name, name) == 0) return &options[i];
    return NULL;
}

static void set_option(sw_cli *o, option_id id, const char *value)
{
    switch (id) {
    case OPT_LOG_FORMAT: o->log_format = value; break;
    case OPT_LOG_LEVEL: o->log_level = value; break;
    case OPT_CONFIG: o->config = value; break;
    case OPT_CONTROL: o->control = value; break;
    case OPT_FORMAT: o->format = value; break;
    case OPT_WHY: o->why = true; break;
    case OPT_JSON: o->json = true; break;
    case OPT_ALL: o->all = true; break;
    case OPT_LINES: o->lines = value; break;
    case OPT_FOLLOW: o->follow = true; break;
    case OPT_SINCE: o->since = value; break;
    case OPT_WATCH: o->watch = true; break;
    }
}

static const char *const log_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"debug", "info", "warn", "warning", "error", NULL};

/* The closest of the names (registry/schema.c's suggestion rule), or NULL; never for a word of
 * one or two characters ("-q" is not a typo of "-x"). */
static const char *closest(const char *word, const char *const *names, size_t n)
{
    return strlen(word) > 2 ? sw_suggest(word, names, n) : NULL;
}

static int unknown(char *err, size_t errlen, const char *what, const char *word, const char *near)
{
    if (near) snprintf(err, errlen, "unknown %s \"%s\" (did you mean \"%s\"?)", what, word, near);
    else snprintf(err, errlen, "unknown %s \"%s\"", what, word);
    return -1;
}

static int unknown_command(char *err, size_t errlen, const char *word)
{
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++) names[i] = commands[i].name;
    return unknown(err, errlen, "command", word, closest(word, names, N_COMMANDS));
}

static int unknown_option(char *err, size_t errlen, const char *word)
{
    const char *names[N_OPTIONS + 3] = {"--help", "--version", "-x"};
    for (size_t i = 0; i < N_OPTIONS; i++) names[3 + i] = options[i].name;
    return unknown(err, errlen, "option", word, closest(word, names, N_OPTIONS + 3));
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A word where a service id was expected that is not one (ids are namespace:name). */
static int not_an_id(const command_help *c, const char *word, char *err, size_t errlen)
{
    if (is_dir(word))
        snprintf(err, errlen, "\"%s\" is an app directory, not a service id (%s)", word,
                 c->synopsis);
    else snprintf(err, errlen, "\"%s\" is not a service id (ids are namespace:name)", word);
    return -1;
}

/* status and logs take [ID] [DIR]: an id has a colon, a directory does not. */
static bool id_or_dir(const command_help *c)
{
    return strcmp(c->name, "status") == 0 || strcmp(c->name, "logs") == 0;
}

static int positional(sw_cli *o, const command_help *c, const char *word, char *err, size_t errlen)
{
    bool id_word = strchr(word, ':') != NULL;
    if (c->positionals == 2) { /* ID [DIR] */
        if (!o->id) {
            if (!id_word) return not_an_id(c, word, err, errlen);
            o->id = word;
            return 0;
        }
        if (!o->dir) {
            o->dir = word;
            return 0;
        }
    } else if (c->positionals == 3 && id_or_dir(c)) { /* [ID] [DIR] */
        if (id_word && !o->id) {
            o->id = word;
            return 0;
        }
        if (!id_word && !o->dir) {
            o->dir = word;
            return 0;
        }
        /* `status cache app/`: the first word was meant as an id */
        if (!id_word && !o->id && !is_dir(o->dir)) return not_an_id(c, o->dir, err, errlen);
    } else if (c->positionals == 3 && !o->id) { /* help [COMMAND] */
        o->id = word;
        return 0;
    } else if (c->positionals == 1 && !o->dir) {
        if (id_word && !is_dir(word))
            return fail(err, errlen, "\"%s\" is a service id, not an app directory", word);
        o->dir = word;
        return 0;
    }
    return fail(err, errlen, "unexpected argument \"%s\"", word);
}

/* logs: -n a whole number, --since a duration ("5m", "1h", "30s"). */
static int check_logs_options(const sw_cli *o, char *err, size_t errlen)
{
    char *end;
    if (o->lines && (!*o->lines || strtol(o->lines, &end, 10) < 0 || *end ||
                     strtol(o->lines, NULL, 10) > 1000000))
        return fail(err, errlen, "-n needs a whole number of lines (0 to 1000000), not \"%s\"",
                    o->lines);
    int64_t ns;
    if (o->since && (sw_parse_duration(o->since, &ns) != 0 || ns <= 0))
        return fail(err, errlen, "--since needs a duration (5m, 1h, 30s), not \"%s\"", o->since);
    return 0;
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
        return first[0] == '-' ? unknown_option(err, errlen, first)
                               : unknown_command(err, errlen, first);
    o->command = c->name;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        char name[64];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL; /* --opt=value */
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const option_spec *opt = a[0] == '-' ? find_option(name) : NULL;
        if (opt && !is(c->name, opt->commands)) {
            snprintf(err, errlen, "option %s does not apply to %s", name, c->name);
            return -1;
        } else if (opt && opt->takes_value) {
            if (eq) set_option(o, opt->id, eq + 1);
            else if (i + 1 >= argc) return fail(err, errlen, "option %s needs a value", a);
            else set_option(o, opt->id, argv[++i]);
        } else if (opt) set_option(o, opt->id, NULL);
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
        } else if (strcmp(a, "-x") == 0) {
            snprintf(err, errlen, "option -x does not apply to %s", c->name);
            return -1;
        } else if (a[0] == '-' && a[1]) return unknown_option(err, errlen, a);
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
    if (check_logs_options(o, err, errlen) != 0) return -1;
    if (c->positionals == 1 && !o->dir && strcmp(c->name, "reload") != 0 &&
        strcmp(c->name, "top") != 0)
        return fail(err, errlen, "%s needs an app directory", c->name);
    if (c->positionals == 2 && !o->id) return fail(err, errlen, "%s needs a service id", c->name);
    if (o->watch && o->exec_id)
        return fail(err, errlen, "%s", "--watch reloads an app: it does not apply to -x");
    if (strcmp(c->name, "help") == 0 && o->id && !find_command(o->id))
        return fail(err, errlen, "no help for \"%s\": unknown command", o->id);
    return 0;
}
