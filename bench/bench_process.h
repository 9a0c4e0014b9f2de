/* Shared by the benchmarks: run one process to its end and read the number it returns, as
 * {n = x} or as a string (a number other than 0 would be an exit code: docs/lua-api.md "How a
 * process runs"). Header-only: each benchmark is one translation unit. */
#ifndef BENCH_PROCESS_H
#define BENCH_PROCESS_H

#include <lauxlib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "message.h"
#include "proc.h"
#include "runtime.h"

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    double value;
} waiter;

static void on_exit_cb(void *arg, uint64_t pid, const sw_exit_info *info)
{
    (void)pid;
    waiter *w = arg;
    lua_State *L = luaL_newstate();
    double v = -1;
    if (info->kind == SW_EXIT_OK && sw_msg_decode(L, info->result, info->result_len) == 1) {
        lua_getfield(L, -1, "value");
        /* a table {n = x}: a main's non-zero number is an exit code (a failure) */
        if (lua_istable(L, -1)) lua_getfield(L, -1, "n");
        v = lua_tonumber(L, -1);
    } else if (info->error) {
        fprintf(stderr, "bench process failed: %s\n", info->error);
    }
    lua_close(L);
    pthread_mutex_lock(&w->lock);
    w->value = v;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Runs entry id (as service, or NULL) with the n values on top of L as its arguments (popped);
 * returns its value, -1 if it failed. Exits if it cannot be spawned. */
static double bench_run(sw_runtime *rt, const char *id, const char *service, lua_State *L, int n)
{
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
    sw_msgbuf args;
    sw_msgbuf_init(&args);
    char err[256];
    sw_msg_encode(L, lua_gettop(L) - n + 1, n, 1 << 20, &args, err, sizeof err);
    lua_pop(L, n);
    sw_spawn s = {.entry = sw_registry_get(rt->registry, id),
                  .service = service,
                  .args = args.data,
                  .args_len = args.len,
                  .on_exit = on_exit_cb,
                  .cb_arg = &w};
    if (!sw_proc_spawn(rt, &s, err, sizeof err)) {
        fprintf(stderr, "spawn %s: %s\n", id, err);
        exit(1);
    }
    sw_msgbuf_free(&args);
    pthread_mutex_lock(&w.lock);
    while (!w.done) pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    return w.value;
}

#endif
