/* The mailbox (see mailbox.h): deliveries in, under the process lock; then handled on the
 * process's own thread, inside its Lua state. */
#include "mailbox.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "http_client.h"
#include "message.h"
#include "net.h"
#include "fs.h"
#include "exec.h"
#include "proc.h"
#include "runtime.h"
#include "task.h"
#include "timer.h"

sw_delivery *sw_delivery_new(sw_delivery_type type, uint64_t from, uint64_t ref, const char *topic,
                             const unsigned char *payload, size_t len)
{
    size_t tlen = topic ? strlen(topic) + 1 : 0;
    sw_delivery *d = malloc(sizeof *d + tlen + len);
    if (!d) return NULL;
    d->next = NULL;
    d->type = type;
    d->failed = false;
    d->from = from;
    d->ref = ref;
    d->topic = NULL;
    if (tlen) {
        memcpy(d->data, topic, tlen);
        d->topic = (const char *)d->data;
    }
    d->payload = d->data + tlen;
    d->len = len;
    if (len) memcpy(d->data + tlen, payload, len);
    return d;
}

void sw_delivery_free_list(sw_delivery *d)
{
    while (d) {
        sw_delivery *next = d->next;
        free(d);
        d = next;
    }
}

/* ---- counting (see mailbox.h) ---- */

#define STEP SW_VM_BUDGET_STEP

static size_t round_step(size_t n) { return (n + STEP - 1) / STEP * STEP; }

/* What a delivery holds: its one allocation. */
static size_t dlv_size(const sw_delivery *d)
{
    return sizeof *d + (size_t)(d->payload - d->data) + d->len;
}

/* Counts d in p's mailbox (lock held). A message that does not fit is refused; anything else
 * is counted and taken from the host's budget even past its cap. */
static int count_in(sw_proc *p, const sw_delivery *d, bool message)
{
    sw_mailbox *mb = &p->mailbox;
    size_t size = dlv_size(d);
    if (message && (mb->msgs >= mb->max_msgs || mb->bytes + size > mb->max_bytes))
        return SW_SEND_FULL;
    if (mb->bytes + size > mb->taken) {
        size_t to = round_step(mb->bytes + size);
        if (!sw_vm_budget_take(&p->rt->memory, to - mb->taken, !message)) return SW_SEND_NO_MEMORY;
        mb->taken = to;
    }
    mb->bytes += size;
    mb->msgs += message;
    return SW_SEND_OK;
}

/* Its service's count of queued messages follows this mailbox's depth at the end of each
 * slice (docs/supervision.md "Resources"): one atomic add when the depth changed since the
 * last report, nothing per message. A delivery wakes a waiting process, so the count lags by
 * a slice at most. Lock held. */
static void report_queued(sw_proc *p, size_t msgs)
{
    sw_mailbox *mb = &p->mailbox;
    if (!p->svc || msgs == mb->reported) return;
    atomic_fetch_add_explicit(&p->svc->queued, (long long)msgs - (long long)mb->reported,
                              memory_order_relaxed);
    mb->reported = msgs;
}

/* Takes msgs messages and bytes bytes out of the counts (lock held); two steps or more of the
 * budget to spare: keep one. */
static void count_out(sw_proc *p, size_t msgs, size_t bytes)
{
    sw_mailbox *mb = &p->mailbox;
    mb->msgs -= msgs < mb->msgs ? msgs : mb->msgs;
    mb->bytes -= bytes < mb->bytes ? bytes : mb->bytes;
    if (mb->taken - mb->bytes >= 2 * STEP) {
        size_t to = round_step(mb->bytes + STEP);
        sw_vm_budget_give(&p->rt->memory, mb->taken - to);
        mb->taken = to;
    }
}

void sw_mailbox_close(sw_proc *p)
{
    sw_mailbox *mb = &p->mailbox;
    sw_vm_budget_give(&p->rt->memory, mb->taken);
    report_queued(p, 0);
    mb->taken = mb->bytes = mb->msgs = 0;
}

static void out_push(sw_mailbox_out *o, size_t bytes)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        uint32_t *sizes = malloc(cap * sizeof *sizes);
        if (!sizes) abort();
        for (size_t i = 0; i < o->n; i++) sizes[i] = o->sizes[(o->head + i) % o->cap];
        free(o->sizes);
        o->sizes = sizes;
        o->cap = cap;
        o->head = 0;
    }
    o->sizes[(o->head + o->n) % o->cap] = (uint32_t)bytes;
    o->n++;
}

/* A large message object keeps its payload outside the heap: counted in the host's budget
 * (never refused: it is delivered already) until the object is collected. */
void sw_mailbox_hold(sw_proc *p, const sw_delivery *d)
{
    size_t n = dlv_size(d);
    sw_mailbox_out *o = &p->mailbox_out;
    o->held += n;
    if (o->held <= o->held_taken) return;
    size_t to = round_step(o->held);
    sw_vm_budget_take(&p->rt->memory, to - o->held_taken, true);
    o->held_taken = to;
}

void sw_mailbox_release(sw_proc *p, const sw_delivery *d)
{
    size_t n = dlv_size(d);
    sw_mailbox_out *o = &p->mailbox_out;
    o->held -= n < o->held ? n : o->held;
    if (o->held_taken - o->held < 2 * STEP) return;
    size_t to = round_step(o->held + STEP);
    sw_vm_budget_give(&p->rt->memory, o->held_taken - to);
    o->held_taken = to;
}

void sw_mailbox_out_free(sw_proc *p)
{
    sw_mailbox_out *o = &p->mailbox_out;
    sw_vm_budget_give(&p->rt->memory, o->held_taken);
    free(o->sizes);
    memset(o, 0, sizeof *o);
}

/* What p took from its inbox since the last call: the inbox is a FIFO, so the messages put in
 * it that it no longer buffers are the oldest ones. A value the process sent into its own
 * inbox only makes it look fuller. */
static void settle(sw_proc *p, size_t *msgs, size_t *bytes)
{
    sw_mailbox_out *o = &p->mailbox_out;
    *msgs = 0;
    *bytes = o->bytes;
    o->bytes = 0;
    if (!o->n) return;
    size_t left = sw_chan_buffered(o->inbox);
    while (o->n > left) {
        *bytes += o->sizes[o->head];
        o->head = (o->head + 1) % o->cap;
        o->n--;
        (*msgs)++;
    }
}

/* ---- in: any thread ---- */

static int deliver(sw_proc *p, sw_delivery *d, bool message)
{
    d->next = NULL;
    pthread_mutex_lock(&p->lock);
    int rc = p->dead ? SW_SEND_DEAD : count_in(p, d, message);
    if (rc != SW_SEND_OK) {
        pthread_mutex_unlock(&p->lock);
        return rc;
    }
    sw_mailbox *mb = &p->mailbox;
    if (mb->tail) mb->tail->next = d;
    else mb->head = d;
    mb->tail = d;
    bool wake = p->waiting;
    p->waiting = false;
    if (d->type == SW_DLV_KILL && p->vm) sw_vm_kill(p->vm);
    pthread_mutex_unlock(&p->lock);
    if (wake) sw_worker_enqueue(p->worker, p);
    return SW_SEND_OK;
}

bool sw_proc_deliver(sw_proc *p, sw_delivery *d) { return deliver(p, d, false) == SW_SEND_OK; }

int sw_proc_send(sw_proc *p, sw_delivery *d) { return deliver(p, d, true); }

/* A request to a process that is gone gets the answer a dying process would have given. */
static void answer_dead(sw_runtime *rt, uint64_t to, sw_delivery *d)
{
    if (d->type == SW_DLV_MONITOR || d->type == SW_DLV_LINK) {
        sw_delivery *ans = sw_delivery_new(
            d->type == SW_DLV_MONITOR ? SW_DLV_EXIT : SW_DLV_LINK_DOWN, to, d->ref, NULL, NULL, 0);
        if (ans) {
            ans->failed = true;
            sw_proc *p = sw_pidtable_grab(&rt->pids, d->from);
            if (!p || !sw_proc_deliver(p, ans)) free(ans);
            if (p) sw_proc_release(p);
        }
    }
    free(d);
}

int sw_runtime_deliver(sw_runtime *rt, uint64_t to, sw_delivery *d)
{
    sw_proc *p = sw_pidtable_grab(&rt->pids, to);
    bool ok = p && sw_proc_deliver(p, d);
    if (p) sw_proc_release(p);
    if (ok) return 0;
    answer_dead(rt, to, d);
    return -1;
}

/* ---- out: the worker running the process ---- */

bool sw_mailbox_take(sw_proc *p)
{
    pthread_mutex_lock(&p->lock);
    sw_delivery *list = p->mailbox.head;
    p->mailbox.head = p->mailbox.tail = NULL;
    p->waiting = false;
    bool dead = p->dead;
    pthread_mutex_unlock(&p->lock);
    if (dead) return false;
    sw_delivery **tail = &p->pending;
    while (*tail) tail = &(*tail)->next;
    *tail = list;
    return true;
}

bool sw_mailbox_park(sw_proc *p, bool ready)
{
    size_t msgs, bytes;
    settle(p, &msgs, &bytes);
    pthread_mutex_lock(&p->lock);
    if (msgs || bytes) count_out(p, msgs, bytes);
    report_queued(p, p->mailbox.msgs);
    bool again = ready || p->mailbox.head;
    p->waiting = !again;
    pthread_mutex_unlock(&p->lock);
    return again;
}

/* ---- handling deliveries in the process ---- */

static void push_event(sw_proc *p, lua_State *L, const char *kind, const sw_delivery *d)
{
    char from[32];
    sw_pid_format(d->from, from, sizeof from);
    sw_proc_push_events(p, L);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, from);
    lua_setfield(L, -2, "from");
    if (d->len && sw_msg_decode(L, d->payload, d->len) == 1)
        lua_setfield(L, -2, d->type == SW_DLV_CANCEL ? "reason" : "result");
    sw_chan_offer(L, -2);
    lua_pop(L, 1);
}

/* A timer's target, registered by whoever armed it: a task id (a sleep) or a channel. */
static void on_timer(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->timers_ref);
    lua_pushnumber(L, (lua_Number)d->ref);
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TNUMBER) { /* a sleeping task */
        sw_task *t = sw_task_find(p, (uint64_t)lua_tonumber(L, -1));
        if (t && t->blocked) sw_task_wake(t, L, 0);
    } else if (!lua_isnil(L, -1)) { /* a channel of time.after or a ticker */
        lua_pushnumber(L, sw_time_now());
        sw_chan_offer(L, -2);
    }
    lua_pop(L, 1);
    if (!d->failed) { /* one-shot: forget it (tickers send failed = repeat) */
        lua_pushnumber(L, (lua_Number)d->ref);
        lua_pushnil(L);
        lua_rawset(L, -3);
    }
    lua_pop(L, 1);
}

static void on_link_down(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    if (!pidvec_remove(&p->links, d->from)) return; /* unlinked meanwhile */
    if (p->trap_links) {
        push_event(p, L, SW_EVENT_LINK_DOWN, d);
        return;
    }
    if (p->doom) return;
    char from[32], msg[512] = "";
    sw_pid_format(d->from, from, sizeof from);
    if (d->len && sw_msg_decode(L, d->payload, d->len) == 1) {
        lua_getfield(L, -1, "error");
        if (lua_type(L, -1) == LUA_TSTRING) snprintf(msg, sizeof msg, ": %s", lua_tostring(L, -1));
        lua_pop(L, 2);
    }
    size_t len = strlen(from) + strlen(msg) + 32;
    p->doom = malloc(len);
    if (p->doom) snprintf(p->doom, len, "linked process %s failed%s", from, msg);
}

/* ---- host calls (SW_CALLS_KEY) ---- */

/* The EXIT of a process a host call of p spawned: its callable, taken out of the table, is
 * called with the decoded result table (nil if there is none). False: not a call's EXIT. */
static bool on_call_exit(lua_State *L, const sw_delivery *d)
{
    lua_getfield(L, LUA_REGISTRYINDEX, SW_CALLS_KEY);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return false;
    }
    lua_pushnumber(L, (lua_Number)d->ref);
    lua_rawget(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 2);
        return false;
    }
    lua_pushnumber(L, (lua_Number)d->ref);
    lua_pushnil(L);
    lua_rawset(L, -4);
    int top = lua_gettop(L);
    if (!d->len || sw_msg_decode(L, d->payload, d->len) != 1) {
        lua_settop(L, top);
        lua_pushnil(L);
    }
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return true;
}

/* A message becomes a message object in the inbox, counted until the process takes it. */
/* The inbox is at stack index inbox (pushed once for all the messages of a dispatch). */
static void on_message(sw_proc *p, lua_State *L, sw_delivery *d, int inbox)
{
    size_t size = dlv_size(d);
    out_push(&p->mailbox_out, size);
    sw_message_push(p, L, d);
    sw_chan_offer(L, inbox);
}

/* Handles one delivery other than a message. */
static void handle(sw_proc *p, lua_State *L, const sw_delivery *d)
{
    switch (d->type) {
    case SW_DLV_MESSAGE: break; /* dispatch's */
    case SW_DLV_TIMER: on_timer(p, L, d); break;
    case SW_DLV_EXIT:
        if (on_call_exit(L, d)) break;
        if (pidvec_remove_pair(&p->monitoring, &p->monitoring_refs, d->from, d->ref))
            push_event(p, L, SW_EVENT_EXIT, d);
        break;
    case SW_DLV_LINK_DOWN: on_link_down(p, L, d); break;
    case SW_DLV_CANCEL: push_event(p, L, SW_EVENT_CANCEL, d); break;
    case SW_DLV_KILL: p->kill_requested = true; break; /* the vm's kill flag is set too */
    case SW_DLV_MONITOR:
        pidvec_push(&p->watchers, d->from);
        pidvec_push(&p->watcher_refs, d->ref);
        break;
    case SW_DLV_DEMONITOR:
        pidvec_remove_pair(&p->watchers, &p->watcher_refs, d->from, d->ref);
        break;
    case SW_DLV_LINK:
        pidvec_remove(&p->links, d->from);
        pidvec_push(&p->links, d->from);
        break;
    case SW_DLV_UNLINK: pidvec_remove(&p->links, d->from); break;
    case SW_DLV_IO: sw_net_dispatch(p, L, d); break;
    case SW_DLV_HTTP: sw_http_dispatch(p, L, d); break;
    case SW_DLV_FS: sw_fs_dispatch(p, L, d); break;
    case SW_DLV_EXEC: sw_exec_dispatch(p, L, d); break;
    }
}

static int dispatch(lua_State *L)
{
    sw_proc *p = lua_touserdata(L, 1);
    int inbox = 0; /* its stack index, once a message came */
    while (p->pending) {
        sw_delivery *d = p->pending;
        p->pending = d->next;
        if (d->type == SW_DLV_MESSAGE) { /* a message object now owned by Lua */
            if (!inbox) {
                sw_proc_push_inbox(p, L);
                inbox = lua_gettop(L);
                p->mailbox_out.inbox = lua_touserdata(L, inbox); /* anchored for p's life */
            }
            on_message(p, L, d, inbox);
            continue;
        }
        handle(p, L, d);
        p->mailbox_out.bytes += dlv_size(d); /* handled: no longer held */
        free(d);
    }
    return 0;
}

/* The first time: makes the function that later slices call, then dispatches. */
static int dispatch_first(lua_State *L)
{
    sw_proc *p = lua_touserdata(L, 1);
    lua_pushcfunction(L, dispatch);
    p->mailbox_out.dispatch_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return dispatch(L);
}

/* lua_cpcall makes a new C function object on every call: garbage in every slice. The function
 * is made once instead and called with lua_pcall, which allocates nothing. */
int sw_mailbox_handle(sw_proc *p)
{
    if (!p->pending) return 0;
    lua_State *L = sw_vm_lua(p->vm);
    if (!p->mailbox_out.dispatch_ref) return lua_cpcall(L, dispatch_first, p);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->mailbox_out.dispatch_ref);
    lua_pushlightuserdata(L, p);
    return lua_pcall(L, 1, 0, 0);
}
