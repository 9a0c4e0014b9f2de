/* `steward run DIR -x ID [ARGS...]`: run one process.lua to completion and exit with its code
 * (0 for success; a returned number; 1 for another failure, with the reason on stderr) once
 * the processes it spawned are gone too: they get CANCEL when it ends and are killed after
 * the host's shutdown.timeout (docs/lua-api.md "steward run -x"). SIGINT or SIGTERM kill the
 * process (or, once it ended, what it left); a second one exits at once with 1. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "api.h"
#include "commands.h"
#include "log.h"
#include "proc.h"
#include "runtime.h"
#include "config.h"
#include "supervisor.h"
#include "memory_high.h"
#include "control.h"
#include "metrics.h"
#include "notify.h"
#include "units.h"
#include "watch.h"

typedef struct exec_state {
    uv_loop_t loop;
    uv_async_t done, gone; /* the process ended; then its tree is gone */
    uv_signal_t sigint, sigterm;
    uv_timer_t tree_timer; /* kills what is left of the tree after tree_timeout_ns */
    int64_t tree_timeout_ns;
    sw_runtime *rt;
    sw_svc_count *tree; /* the processes it spawned, at any depth; NULL: not counted */
    uint64_t pid;
    bool ended; /* on the loop: the process ended, its tree may be left */
    int signals;
    int code;
    char *error;
} exec_state;

/* On the worker thread as the process ends: keep what main needs, wake the main loop. */
static void on_process_exit(void *arg, uint64_t pid, const sw_exit_info *info)
{
    (void)pid;
    exec_state *x = arg;
    x->code = info->code;
    if (info->kind != SW_EXIT_OK) x->error = strdup(info->error ? info->error : "failed");
    uv_async_send(&x->done);
}

/* Any thread: the last process of the tree is gone. */
static void on_tree_gone(void *arg) { uv_async_send(&((exec_state *)arg)->gone); }

static void on_gone(uv_async_t *h)
{
    exec_state *x = h->data;
    if (sw_tree_gone(x->tree)) uv_stop(h->loop); /* else a stale call: the next one comes */
}

static void on_tree_timeout(uv_timer_t *t)
{
    exec_state *x = t->data;
    sw_runtime_kill_tree(x->rt, x->tree);
}

/* The process ended: done once what it spawned is gone (CANCEL, then a kill after the bound). */
static void on_done(uv_async_t *h)
{
    exec_state *x = h->data;
    x->ended = true;
    if (!x->tree || sw_tree_end(x->tree, on_tree_gone, x)) {
        uv_stop(h->loop);
        return;
    }
    sw_runtime_cancel_tree(x->rt, x->tree);
    uv_timer_start(&x->tree_timer, on_tree_timeout,
                   (uint64_t)((x->tree_timeout_ns + SW_NS_PER_MS - 1) / SW_NS_PER_MS), 0);
}

static void on_signal(uv_signal_t *h, int signum)
{
    exec_state *x = h->data;
    (void)signum;
    if (++x->signals > 1) _exit(1);
    if (!x->ended) sw_runtime_kill(x->rt, x->pid);
    else if (x->tree) sw_runtime_kill_tree(x->rt, x->tree); /* what it left */
}

static uint64_t exec_spawn(exec_state *x, const sw_spawn *s, char *err, size_t errlen)
{
    sw_proc *p = sw_proc_prepare(x->rt, s, err, errlen);
    if (!p) return 0;
    x->tree = p->svc;
    return sw_proc_launch(p, s);
}

/* Log settings: the command line, else the host config, else text at info. */
sw_log *sw_cli_log(const sw_cli *cli, const sw_host_config *cfg)
{
    const char *format = cli->log_format ? cli->log_format : cfg ? cfg->log_format : NULL;
    const char *lvl = cli->log_level ? cli->log_level : cfg ? cfg->log_level : NULL;
    bool json = format && strcmp(format, "json") == 0;
    int level = lvl ? sw_log_level_parse(lvl) : SW_LOG_INFO;
    bool color = !json && isatty(2) && !getenv("NO_COLOR");
    return sw_log_new(stderr, json, level < 0 ? SW_LOG_INFO : (sw_log_level)level, color);
}

static int exec_process(const sw_cli *cli, const sw_host_config *cfg, const sw_registry *reg,
                        const sw_entry *e)
{
    exec_state x = {.code = 1, .tree_timeout_ns = cfg->shutdown_timeout_ns};
    sw_log *log = sw_cli_log(cli, cfg);
    uv_loop_init(&x.loop);
    uv_async_init(&x.loop, &x.done, on_done);
    uv_async_init(&x.loop, &x.gone, on_gone);
    uv_timer_init(&x.loop, &x.tree_timer);
    x.done.data = x.gone.data = x.tree_timer.data = &x;
    sw_runtime_config rc;
    sw_host_config_runtime(cfg, &rc);
    sw_api_use(&rc); /* the composition root: the runtime gets the Lua modules from here */
    x.rt = sw_runtime_new(reg, log, &rc);
    if (!x.rt) {
        fprintf(stderr, "steward: cannot start the runtime\n");
        return 1;
    }
    sw_spawn s = {.entry = e,
                  .argc = cli->exec_argc,
                  .argv = cli->exec_argv,
                  .on_exit = on_process_exit,
                  .cb_arg = &x,
                  .tree = e->id};
    char err[512];
    x.pid = exec_spawn(&x, &s, err, sizeof err);
    if (!x.pid) {
        fprintf(stderr, "%s: %s\n", e->id, err);
        x.code = 1;
    } else {
        uv_signal_init(&x.loop, &x.sigint);
        uv_signal_init(&x.loop, &x.sigterm);
        x.sigint.data = x.sigterm.data = &x;
        uv_signal_start(&x.sigint, on_signal, SIGINT);
        uv_signal_start(&x.sigterm, on_signal, SIGTERM);
        uv_run(&x.loop, UV_RUN_DEFAULT);
        uv_close((uv_handle_t *)&x.sigint, NULL);
        uv_close((uv_handle_t *)&x.sigterm, NULL);
    }
    fflush(stdout);
    sw_std_streams_flush(&x.rt->std, SW_STD_FLUSH_TIMEOUT_NS); /* and its io output */
    sw_log_flush(log, SW_LOG_FLUSH_TIMEOUT_NS); /* the process's log lines come before its error */
    if (x.error) fprintf(stderr, "%s: %s\n", e->id, x.error);
    sw_runtime_free(x.rt);
    uv_close((uv_handle_t *)&x.done, NULL);
    uv_close((uv_handle_t *)&x.gone, NULL);
    uv_close((uv_handle_t *)&x.tree_timer, NULL);
    uv_run(&x.loop, UV_RUN_DEFAULT);
    uv_loop_close(&x.loop);
    sw_log_free(log);
    free(x.error);
    return x.code;
}

/* ---- the app: services under the supervisor ---- */

typedef struct app_state {
    uv_loop_t loop;
    uv_signal_t sigint, sigterm, sighup, sigusr2;
    sw_supervisor sup;
    sw_memory_high high;
    sw_control *ctl;
    sw_metrics *metrics; /* NULL: no metrics.listen */
    int signals;
    sw_watch *watch;        /* --watch, or NULL */
    uv_timer_t sd_watchdog; /* pings systemd's watchdog, when it has one */
    sw_notify *notify;
} app_state;

static void on_app_signal(uv_signal_t *h, int signum)
{
    app_state *a = h->data;
    if (++a->signals > 1) {
        sw_log_write(a->sup.log, SW_LOG_WARN, NULL, "second signal: exiting now", NULL, 0);
        sw_control_remove_file(a->ctl);
        sw_log_flush(a->sup.log, 200 * 1000 * 1000); /* briefly: the user asked to exit now */
        _exit(1);
    }
    sw_log_field f = {
        .key = "signal", .type = SW_LF_STR, .s = signum == SIGINT ? "SIGINT" : "SIGTERM"};
    sw_log_write(a->sup.log, SW_LOG_INFO, NULL, "signal", &f, 1);
    sw_supervisor_shutdown(&a->sup);
}

/* SIGHUP reloads what changed; SIGUSR2 reloads and restarts everything. */
static void on_reload_signal(uv_signal_t *h, int signum)
{
    app_state *a = h->data;
    sw_log_field f = {
        .key = "signal", .type = SW_LF_STR, .s = signum == SIGHUP ? "SIGHUP" : "SIGUSR2"};
    sw_log_write(a->sup.log, SW_LOG_INFO, NULL, "signal", &f, 1);
    sw_supervisor_reload(&a->sup, signum == SIGUSR2, NULL);
}

/* SIGINT/SIGTERM shut down, SIGHUP/SIGUSR2 reload; on = false closes the watchers. */
static void watch_signals(app_state *a, bool on)
{
    struct {
        uv_signal_t *h;
        uv_signal_cb cb;
        int signum;
    } w[] = {{&a->sigint, on_app_signal, SIGINT},
             {&a->sigterm, on_app_signal, SIGTERM},
             {&a->sighup, on_reload_signal, SIGHUP},
             {&a->sigusr2, on_reload_signal, SIGUSR2}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        if (!on) {
            uv_close((uv_handle_t *)w[i].h, NULL);
            continue;
        }
        uv_signal_init(&a->loop, w[i].h);
        w[i].h->data = a;
        uv_signal_start(w[i].h, w[i].cb, w[i].signum);
    }
}

/* ---- --watch and systemd's watchdog ---- */

/* A YAML or Lua file changed (debounced): a reload, as SIGHUP. */
static void on_files_changed(void *arg, const char *file)
{
    app_state *a = arg;
    if (a->sup.shutting_down) return;
    sw_log_field f = {.key = "file", .type = SW_LF_STR, .s = file};
    sw_log_write(a->sup.log, SW_LOG_INFO, NULL, "files changed", &f, 1);
    sw_supervisor_reload(&a->sup, false, NULL);
}

/* --watch: failures wait for the next change (docs/supervision.md "Watch mode"). -1 when the
 * directory cannot be watched (printed). */
static int open_watch(app_state *a, const sw_cli *cli, const sw_host_config *cfg)
{
    if (!cli->watch) return 0;
    char *sock = sw_control_default_path(cli->dir, cfg->control_socket), err[300];
    a->watch =
        sw_watch_open(&a->loop, cli->dir, sock, a->sup.log, on_files_changed, a, err, sizeof err);
    free(sock);
    if (!a->watch) {
        fprintf(stderr, "steward: --watch: %s\n", err);
        return -1;
    }
    a->sup.hold_failures = true;
    sw_log_field f = {.key = "dir", .type = SW_LF_STR, .s = cli->dir};
    sw_log_write(a->sup.log, SW_LOG_INFO, NULL, "watching", &f, 1);
    return 0;
}

/* The supervisor's loop pings systemd: a wedged loop stops the pings, and systemd restarts
 * the host (WatchdogSec=, docs/operating.md). */
static void ping_systemd(uv_timer_t *t) { sw_notify_watchdog(((app_state *)t->data)->notify); }

static void start_sd_watchdog(app_state *a)
{
    uv_timer_init(&a->loop, &a->sd_watchdog);
    a->sd_watchdog.data = a;
    int64_t ns = a->notify ? sw_notify_watchdog_ns() : 0;
    uint64_t half_ms = (uint64_t)(ns / 2 / SW_NS_PER_MS);
    if (ns > 0) uv_timer_start(&a->sd_watchdog, ping_systemd, 0, half_ms ? half_ms : 1);
}

/* The control socket and sd_notify around the supervisor; NULL (message printed) when the
 * socket cannot be served, e.g. another host listens on it. */
static sw_control *open_control(const sw_cli *cli, const sw_host_config *cfg, sw_supervisor *sup,
                                sw_notify **notify)
{
    char *path = sw_control_default_path(cli->dir, cfg->control_socket);
    char err[600];
    sw_control_limits limits = {cfg->control_idle_timeout_ns, cfg->control_request_timeout_ns};
    sw_control *ctl = path ? sw_control_open(sup, path, &limits, err, sizeof err) : NULL;
    if (!ctl) fprintf(stderr, "steward: %s\n", path ? err : "out of memory");
    free(path);
    *notify = ctl ? sw_notify_from_env(sup->log) : NULL;
    sup->notify = sw_notify_send;
    sup->notify_arg = *notify;
    return ctl;
}

/* The metrics endpoint, when the config names one (docs/operating.md "Metrics"); false
 * (message printed) when it cannot listen there. */
static bool open_metrics(const sw_host_config *cfg, app_state *a)
{
    if (!cfg->metrics_listen) return true;
    char err[600];
    a->metrics = sw_metrics_open(&a->sup, cfg->metrics_listen, err, sizeof err);
    if (!a->metrics) fprintf(stderr, "steward: %s\n", err);
    return a->metrics != NULL;
}

/* The app's log: sw_cli_log, keeping records in rings and files as the config says; NULL
 * (message printed) when it cannot. */
static sw_log *app_log(const sw_cli *cli, const sw_host_config *cfg)
{
    sw_log *log = sw_cli_log(cli, cfg);
    sw_log_keep keep;
    sw_host_config_log_keep(cfg, &keep);
    char err[PATH_MAX + 200];
    if (log && sw_log_start_keeping(log, &keep, err, sizeof err) != 0) {
        fprintf(stderr, "steward: %s\n", err);
        sw_log_free(log);
        return NULL;
    }
    return log;
}

static int run_app(const sw_cli *cli, const sw_host_config *cfg, const sw_registry *reg)
{
    app_state a = {0};
    sw_log *log = app_log(cli, cfg);
    if (!log) return 1;
    sw_runtime_config rc;
    sw_host_config_runtime(cfg, &rc);
    sw_api_use(&rc);
    rc.service_request = sw_supervisor_service_request; /* the `service` module's door */
    rc.service_request_arg = &a.sup;
    sw_runtime *rt = sw_runtime_new(reg, log, &rc);
    if (!rt) {
        fprintf(stderr, "steward: cannot start the runtime\n");
        sw_log_free(log);
        return 1;
    }
    uv_loop_init(&a.loop);
    if (sw_supervisor_init(&a.sup, &a.loop, rt, reg, log) != 0) {
        fprintf(stderr, "steward: out of memory\n");
        sw_runtime_free(rt);
        uv_loop_close(&a.loop);
        sw_log_free(log);
        return 1;
    }
    a.sup.shutdown_timeout_ns = cfg->shutdown_timeout_ns;
    sw_notify *notify;
    sw_control *ctl = open_control(cli, cfg, &a.sup, &notify);
    if (!ctl || !open_metrics(cfg, &a)) {
        sw_control_close(ctl);
        sw_notify_free(notify);
        sw_runtime_free(rt);
        sw_supervisor_close(&a.sup);
        uv_loop_close(&a.loop);
        sw_log_free(log);
        return 1;
    }
    a.ctl = ctl;
    a.notify = notify;
    if (open_watch(&a, cli, cfg) != 0) {
        sw_runtime_free(rt);
        sw_control_close(ctl);
        sw_supervisor_close(&a.sup);
        uv_loop_close(&a.loop);
        sw_notify_free(notify);
        sw_log_free(log);
        return 1;
    }
    start_sd_watchdog(&a);
    watch_signals(&a, true);
    sw_memory_high_start(&a.high, &a.sup, sw_host_config_memory_high(cfg));
    sw_supervisor_start(&a.sup);
    uv_run(&a.loop, UV_RUN_DEFAULT);
    watch_signals(&a, false);
    sw_watch_close(a.watch);
    uv_close((uv_handle_t *)&a.sd_watchdog, NULL);
    sw_memory_high_stop(&a.high);
    sw_runtime_free(rt); /* workers stop first: no exit report can race the close below */
    sw_metrics_close(a.metrics);
    sw_control_close(ctl);
    sw_supervisor_close(&a.sup);
    uv_loop_close(&a.loop);
    sw_notify_free(notify);
    sw_log_flush(log, SW_LOG_FLUSH_TIMEOUT_NS); /* pending summaries before the last line */
    sw_log_write(log, SW_LOG_INFO, NULL, "stopped", NULL, 0);
    sw_log_free(log);
    return a.high.fired ? 1 : 0; /* a shutdown for memory.high is a failure (docs/operating.md) */
}

int sw_cmd_run(const sw_cli *cli)
{
    sw_host_config cfg;
    sw_registry *reg = sw_load_host(cli, &cfg);
    if (!reg) return 2;
    int code;
    if (!cli->exec_id) {
        code = run_app(cli, &cfg, reg);
    } else {
        const sw_entry *e = sw_registry_get(reg, cli->exec_id);
        if (!e || e->kind != SW_KIND_PROCESS_LUA) {
            fprintf(stderr, "steward: %s %s\n", cli->exec_id,
                    e ? "is not a process.lua" : "names no entry");
            code = 2;
        } else {
            code = exec_process(cli, &cfg, reg, e);
        }
    }
    sw_registry_free(reg);
    sw_host_config_free(&cfg);
    return code;
}
