/* How a process ends, whatever the cause: its result encoded for EXIT events, monitors and
 * links told, late requests answered, the exit callback called, and everything it held freed
 * (tasks, sockets, transfers, its state; memory back to the OS after a large one). */
#include "proc_internal.h"

#include <lauxlib.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "mailbox.h"
#include "message.h"
#include "net.h"
#include "fs.h"
#include "exec.h"
#include "runtime.h"
#include "task.h"

#define TRIM_AFTER_BYTES \
    ((size_t)32 << 20) /* a process that held this much: malloc_trim at its end */

typedef struct exit_state {
    sw_exit_kind kind;
    char *error;
    bool retryable;
    int code;
    sw_msgbuf result; /* encoded {value = ..., error = ...} */
    lua_State *co;    /* where the value and error sit (0 index: absent) */
    int value_idx, error_idx;
    /* function.lua (funcs): every returned value, co's 1..nvalues, as `values` = {n = N, ...},
     * copied as messages are (the host's message limit, the encoder's error as `error`) */
    bool all_values;
    int nvalues;
    size_t max_len;
} exit_state;

static void push_from(lua_State *L, lua_State *co, int idx)
{
    if (!co || idx == 0) {
        lua_pushnil(L);
        return;
    }
    lua_pushvalue(co, idx);
    lua_xmove(co, L, 1);
}

/* lua_cpcall: builds and encodes the result table; a value that cannot be copied (a function)
 * is left out rather than losing the whole result. */
static void push_values(lua_State *L, const exit_state *x)
{
    lua_createtable(L, x->nvalues, 1);
    for (int i = 1; i <= x->nvalues; i++) {
        push_from(L, x->co, i);
        lua_rawseti(L, -2, i);
    }
    lua_pushinteger(L, x->nvalues);
    lua_setfield(L, -2, "n");
}

static int encode_result(lua_State *L)
{
    exit_state *x = lua_touserdata(L, 1);
    char err[160];
    for (int attempt = 0; attempt < 2; attempt++) {
        lua_createtable(L, 0, 2);
        if (attempt == 0) {
            push_from(L, x->co, x->value_idx);
            lua_setfield(L, -2, "value");
            if (x->all_values) push_values(L, x), lua_setfield(L, -2, "values");
        }
        if (x->error_idx) push_from(L, x->co, x->error_idx);
        else if (x->error) lua_pushstring(L, x->error);
        else if (x->all_values && attempt == 1) lua_pushstring(L, err); /* values not copied */
        else lua_pushnil(L);
        lua_setfield(L, -2, "error");
        if (sw_msg_encode(L, -1, 1, x->max_len, &x->result, err, sizeof err) == 0) return 0;
        lua_pop(L, 1);
        x->error_idx = 0; /* a structured error that cannot be copied becomes its text */
    }
    x->result.len = 0;
    return 0;
}

static void send_event(sw_runtime *rt, sw_delivery_type type, uint64_t to, uint64_t from,
                       uint64_t ref, const exit_state *x)
{
    sw_delivery *d = sw_delivery_new(type, from, ref, NULL, x->result.data, x->result.len);
    if (!d) return;
    d->failed = x->kind != SW_EXIT_OK;
    sw_runtime_deliver(rt, to, d);
}

/* Late monitor and link requests are answered as if they had arrived just after the end. */
static void answer_late(sw_proc *p, sw_delivery *list, const exit_state *x)
{
    while (list) {
        sw_delivery *next = list->next;
        if (list->type == SW_DLV_MONITOR)
            send_event(p->rt, SW_DLV_EXIT, list->from, p->id, list->ref, x);
        else if (list->type == SW_DLV_LINK && x->kind != SW_EXIT_OK)
            send_event(p->rt, SW_DLV_LINK_DOWN, list->from, p->id, 0, x);
        free(list);
        list = next;
    }
}

/* Out of the counts admit() put it in (docs/security.md "Limits"). */
static void discount(sw_proc *p)
{
    if (p->svc_counted && atomic_fetch_sub(&p->svc->live, 1) == 1 && atomic_load(&p->svc->ending) &&
        !atomic_exchange(&p->svc->told, true))
        p->svc->on_gone(p->svc->gone_arg); /* the last of an ending tree (runtime.h) */
    if (p->counted) atomic_fetch_sub_explicit(&p->rt->procs, 1, memory_order_relaxed);
    p->svc_counted = p->counted = false;
}

void proc_free_state(sw_proc *p)
{
    while (p->tasks) sw_task_free(p->tasks, NULL); /* waits unlink before the state closes */
    sw_net_proc_end(p);                            /* its sockets close, whatever ended it */
    sw_http_proc_end(p);                           /* and its HTTP transfers go */
    sw_std_proc_end(p);                            /* and its unfinished io lines */
    sw_fs_proc_end(p);                             /* its files close */
    sw_exec_proc_end(p);                           /* its commands' process groups are killed */
    pthread_mutex_lock(&p->lock);
    sw_vm *vm = p->vm;
    p->vm = NULL;
    pthread_mutex_unlock(&p->lock);
    size_t held = vm ? sw_vm_memory(vm) : 0;
    sw_vm_free(vm);
    /* glibc keeps freed memory in its arenas: after a large process, give it back to the OS
     * (a 2.9 GB process that failed used to leave the host at 2 GB). Rare, so its cost (a
     * walk of the arenas) does not matter. */
    if (held >= TRIM_AFTER_BYTES) malloc_trim(0);
    pidvec_free(&p->watchers);
    pidvec_free(&p->watcher_refs);
    pidvec_free(&p->links);
    pidvec_free(&p->monitoring);
    pidvec_free(&p->monitoring_refs);
    sw_msgbuf_free(&p->sendbuf);
    sw_mailbox_out_free(p);
    if (p->send_to) sw_proc_release(p->send_to);
    p->send_to = NULL;
    free(p->args);
    free(p->doom);
    free(p->service);
    discount(p);
}

/* The end, whatever the cause: the pid dies first, so anything sent from now on is answered
 * as to a dead process; then monitors, links and the exit callback hear of it. */
static void proc_exit(sw_proc *p, exit_state *x)
{
    sw_vm_finish(p->vm); /* no memory limit or hook while the host reads results */
    sw_msgbuf_init(&x->result);
    x->all_values = p->entry->kind == SW_KIND_FUNCTION_LUA;
    x->max_len = x->all_values ? p->rt->max_message : 1 << 20;
    if (lua_cpcall(sw_vm_lua(p->vm), encode_result, x) != 0) x->result.len = 0;
    pthread_mutex_lock(&p->lock);
    p->dead = true;
    sw_delivery *late = p->mailbox.head;
    p->mailbox.head = p->mailbox.tail = NULL;
    sw_mailbox_close(p);
    pthread_mutex_unlock(&p->lock);
    sw_pidtable_remove(&p->rt->pids, p->id);
    answer_late(p, late, x);
    answer_late(p, p->pending, x);
    p->pending = NULL;
    for (size_t i = 0; i < p->watchers.n; i++)
        send_event(p->rt, SW_DLV_EXIT, p->watchers.v[i], p->id, p->watcher_refs.v[i], x);
    if (x->kind != SW_EXIT_OK)
        for (size_t i = 0; i < p->links.n; i++)
            send_event(p->rt, SW_DLV_LINK_DOWN, p->links.v[i], p->id, 0, x);
    sw_std_proc_end(p); /* its last io line before anyone hears it ended */
    if (p->on_exit) {
        sw_exit_info info = {x->kind, x->error,       x->retryable,
                             x->code, x->result.data, x->result.len};
        p->on_exit(p->cb_arg, p->id, &info);
    }
    sw_worker_slice_retire(p->worker); /* the watchdog may still hold our vm from the last slice */
    proc_free_state(p);
    free(x->error);
    sw_msgbuf_free(&x->result);
    sw_proc_release(p); /* the pid table's reference */
}

/* errors.new{retryable = false} makes a failure final; fields are read raw (no metamethods). */
static bool error_retryable(lua_State *co, int idx)
{
    if (!co || !idx || lua_type(co, idx) != LUA_TTABLE) return true;
    lua_pushliteral(co, "retryable");
    lua_rawget(co, idx < 0 ? idx - 1 : idx);
    bool final = lua_type(co, -1) == LUA_TBOOLEAN && !lua_toboolean(co, -1);
    lua_pop(co, 1);
    return !final;
}

/* A failure. The raw error value, if any, is at the top of co. */
void proc_exit_failed(sw_proc *p, lua_State *co, const char *msg, sw_exit_kind kind)
{
    exit_state x = {.kind = kind, .code = 1, .co = co};
    x.error = strdup(msg ? msg : "error");
    bool has_value = co && lua_gettop(co) > 0;
    x.error_idx = has_value && lua_type(co, -1) == LUA_TTABLE ? lua_gettop(co) : 0;
    x.retryable = error_retryable(co, x.error_idx);
    proc_exit(p, &x);
}

/* The error text of a returned (nil, err): a string, an errors.new message, or a type name. */
static char *returned_error_text(lua_State *co, int idx)
{
    if (lua_type(co, idx) == LUA_TSTRING || lua_type(co, idx) == LUA_TNUMBER)
        return strdup(lua_tostring(co, idx));
    if (lua_type(co, idx) == LUA_TTABLE) {
        lua_pushliteral(co, "message");
        lua_rawget(co, idx);
        char *s = strdup(lua_type(co, -1) == LUA_TSTRING ? lua_tostring(co, -1) : "(error object)");
        lua_pop(co, 1);
        return s;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "(error object is a %s value)", lua_typename(co, lua_type(co, idx)));
    return strdup(buf);
}

/* How main's results are judged (docs/lua-api.md "How a process runs"). */
typedef enum { RETURNED_OK, RETURNED_ERROR, RETURNED_CODE } returned_as;

static returned_as judge_returned(const sw_proc *p, lua_State *co, int n)
{
    /* function.lua hands its values back to a caller (funcs): only `nil, err` fails it */
    bool values = p->entry->kind == SW_KIND_FUNCTION_LUA;
    bool no_value = n >= 1 && (values ? lua_isnil(co, 1) : !lua_toboolean(co, 1));
    if (n >= 2 && no_value && !lua_isnil(co, 2)) return RETURNED_ERROR;
    if (!values && n >= 1 && lua_type(co, 1) == LUA_TNUMBER && lua_tonumber(co, 1) != 0)
        return RETURNED_CODE;
    return RETURNED_OK;
}

/* A non-zero number returned by main: "exited with code N"; `run -x` exits with N when it is
 * a whole number from 1 to 255 (what a shell can see), else with 1. */
static void returned_code(exit_state *x, lua_State *co)
{
    lua_Number n = lua_tonumber(co, 1);
    char text[64];
    snprintf(text, sizeof text, "exited with code " LUA_NUMBER_FMT, n); /* as tostring(n) */
    x->kind = SW_EXIT_FAILED;
    x->code = n >= 1 && n <= 255 && n == (lua_Number)(int)n ? (int)n : 1;
    x->error = strdup(text);
}

/* main returned: success, or a failure by `nil, err` / `false, err` or a non-zero number. */
void proc_exit_returned(sw_proc *p, lua_State *co)
{
    int n = lua_gettop(co);
    exit_state x = {
        .kind = SW_EXIT_OK, .retryable = true, .co = co, .value_idx = n >= 1 ? 1 : 0, .nvalues = n};
    switch (judge_returned(p, co, n)) {
    case RETURNED_ERROR:
        x.kind = SW_EXIT_FAILED;
        x.code = 1;
        x.value_idx = x.nvalues = 0;
        x.error_idx = lua_type(co, 2) == LUA_TTABLE ? 2 : 0; /* errors.new: kind, retryable */
        x.error = returned_error_text(co, 2);
        x.retryable = error_retryable(co, 2);
        break;
    case RETURNED_CODE: returned_code(&x, co); break;
    case RETURNED_OK: break;
    }
    proc_exit(p, &x);
}

void sw_proc_discard(sw_proc *p)
{
    sw_delivery_free_list(p->pending);
    p->pending = NULL;
    pthread_mutex_lock(&p->lock);
    p->dead = true;
    sw_mailbox_close(p);
    pthread_mutex_unlock(&p->lock);
    proc_free_state(p);
    sw_proc_release(p); /* the pid table's reference */
}
