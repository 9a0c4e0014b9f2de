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
static void held_add(sw_proc *p, size_t n)
{
    sw_mailbox_out *o = &p->mailbox_out;
    o->held += n;
    if (o->held <= o->held_taken) return;
    size_t to = round_step(o->held);
    sw_vm_budget_take(&p->rt->memory, to - o->held_taken, true);
    o->held_taken = to;
}

static void held_sub(sw_proc *p, size_t n)
{
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

/* ---- message objects ----
 * A message object holds the delivery's sender, topic and encoded payload. A small one is
 * copied into the userdata and the delivery freed at once: the object then needs no
 * finalizer, and objects with finalizers cost the collector a separate pass each. A large one
 * keeps the delivery and frees it in __gc, so its bytes stay outside the process's memory
 * limit until data() decodes them. Both kinds share the methods; each method has the two
 * metatables as upvalues, which makes checking its argument two pointer comparisons.
 * The metatables are made once per process and found again by registry refs kept in its
 * mailbox_out (an integer key, not a hash lookup per message). topic() and from() keep the
 * last string they returned as their third upvalue: a process mostly hears the same topics
 * from the same peers, so most calls push that string again instead of interning a new one. */

#define MSG_INLINE_MAX 512 /* topic + payload bytes copied into the object */

typedef struct msg_obj {
    sw_delivery *owned; /* large: the delivery, freed by __gc; small: NULL */
    uint64_t from;
    uint16_t len;   /* small: the payload's length (large: owned->len) */
    uint16_t tlen;  /* small: the topic's length without its NUL (large: strlen(owned->topic)) */
    bool has_topic; /* small: the topic is at bytes; large: at owned->topic */
    unsigned char bytes[]; /* small: topic (NUL-terminated), then payload */
} msg_obj;                 /* kept small: every message is garbage for the collector to sweep */

_Static_assert(MSG_INLINE_MAX <= UINT16_MAX, "a small message's lengths fit msg_obj's fields");

/* The payload of m and its length. */
static const unsigned char *msg_payload_of(const msg_obj *m, size_t *len)
{
    if (m->owned) {
        *len = m->owned->len;
        return m->owned->payload;
    }
    *len = m->len;
    return m->bytes + (m->has_topic ? m->tlen + 1 : 0);
}

static msg_obj *check_msg(lua_State *L)
{
    msg_obj *m = lua_touserdata(L, 1);
    if (m && lua_getmetatable(L, 1)) {
        int ok =
            lua_rawequal(L, -1, lua_upvalueindex(1)) || lua_rawequal(L, -1, lua_upvalueindex(2));
        lua_pop(L, 1);
        if (ok) return m;
    }
    luaL_typerror(L, 1, "message");
    return NULL;
}

static const char *msg_topic_of(const msg_obj *m)
{
    if (!m->has_topic) return NULL;
    return m->owned ? m->owned->topic : (const char *)m->bytes;
}

/* Pushes the string s[0..n) from the cache in upvalue 3 when it holds it, else a new one that
 * then replaces the cache. */
static void push_cached(lua_State *L, const char *s, size_t n)
{
    size_t cn;
    const char *c = lua_tolstring(L, lua_upvalueindex(3), &cn); /* nil or a string */
    if (c && cn == n && memcmp(c, s, n) == 0) {
        lua_pushvalue(L, lua_upvalueindex(3));
        return;
    }
    lua_pushlstring(L, s, n);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(3));
}

static int msg_topic(lua_State *L)
{
    msg_obj *m = check_msg(L);
    const char *topic = msg_topic_of(m);
    if (topic) push_cached(L, topic, m->owned ? strlen(topic) : m->tlen);
    else lua_pushnil(L);
    return 1;
}

/* The cache holds the pid string of mailbox_out.from_cached: compared by id, not formatted. */
static int msg_from(lua_State *L)
{
    msg_obj *m = check_msg(L);
    sw_mailbox_out *o = &sw_proc_of(L)->mailbox_out;
    if (o->from_cached == m->from && !lua_isnil(L, lua_upvalueindex(3))) {
        lua_pushvalue(L, lua_upvalueindex(3));
        return 1;
    }
    char pid[32];
    sw_pid_format(m->from, pid, sizeof pid);
    lua_pushstring(L, pid);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(3));
    o->from_cached = m->from;
    return 1;
}

static int msg_payload(lua_State *L)
{
    check_msg(L);
    lua_settop(L, 1);
    return 1; /* the payload is the message itself: payload():data() and data() agree */
}

static int msg_data(lua_State *L)
{
    size_t len;
    const unsigned char *payload = msg_payload_of(check_msg(L), &len);
    int n = sw_msg_decode(L, payload, len);
    if (n < 0) return luaL_error(L, "corrupt message");
    return n;
}

static int msg_gc(lua_State *L)
{
    msg_obj *m = lua_touserdata(L, 1);
    if (m->owned) held_sub(sw_proc_of(L), dlv_size(m->owned));
    free(m->owned);
    m->owned = NULL;
    return 0;
}

/* Makes the small and the large messages' metatables and keeps them in o's refs. */
static void make_msg_metatables(lua_State *L, sw_mailbox_out *o)
{
    static const luaL_Reg methods[] = {{"topic", msg_topic},
                                       {"from", msg_from},
                                       {"payload", msg_payload},
                                       {"data", msg_data},
                                       {NULL, NULL}};
    lua_createtable(L, 0, 2);
    lua_createtable(L, 0, 3);
    lua_createtable(L, 0, 4); /* the methods */
    for (const luaL_Reg *r = methods; r->name; r++) {
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_pushnil(L); /* the cache of topic() and from() */
        lua_pushcclosure(L, r->func, 3);
        lua_setfield(L, -2, r->name);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "__index");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, msg_gc);
    lua_setfield(L, -2, "__gc");
    for (int i = -2; i <= -1; i++) {
        lua_pushliteral(L, "message");
        lua_setfield(L, i - 1, "__metatable");
    }
    o->msg_mt_ref[1] = luaL_ref(L, LUA_REGISTRYINDEX);
    o->msg_mt_ref[0] = luaL_ref(L, LUA_REGISTRYINDEX);
}

static bool msg_small(const sw_delivery *d)
{
    return (size_t)(d->payload - d->data) + d->len <= MSG_INLINE_MAX;
}

void sw_message_push(sw_proc *p, lua_State *L, sw_delivery *d)
{
    sw_mailbox_out *o = &p->mailbox_out;
    if (!o->msg_mt_ref[0]) make_msg_metatables(L, o);
    size_t tlen = (size_t)(d->payload - d->data); /* the topic and its NUL, or 0 */
    bool small = msg_small(d);
    msg_obj *m = lua_newuserdata(L, sizeof *m + (small ? tlen + d->len : 0));
    m->owned = NULL; /* until set, a collection frees nothing */
    lua_rawgeti(L, LUA_REGISTRYINDEX, o->msg_mt_ref[!small]);
    lua_setmetatable(L, -2);
    m->from = d->from;
    m->has_topic = d->topic != NULL;
    if (small) {
        m->len = (uint16_t)d->len;
        m->tlen = (uint16_t)(tlen ? tlen - 1 : 0);
        memcpy(m->bytes, d->data, tlen + d->len); /* topic then payload, as in the delivery */
        free(d);
    } else {
        m->len = m->tlen = 0;
        m->owned = d;
    }
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
    if (!msg_small(d)) held_add(p, size);
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
