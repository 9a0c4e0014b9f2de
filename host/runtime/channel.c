/* Channels. A channel is a userdata; its environment table holds buffered values at integer
 * keys head+1..tail and the values of blocked senders at light-userdata keys (their wait
 * nodes). Blocked tasks wait in FIFO queues of nodes; a select owns one node per case, and the
 * first case to fire unlinks the others. */
#include "channel.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

#define CHAN_MT "steward.channel"

typedef struct wait_node wait_node;
typedef struct waitset waitset;
typedef struct sw_chan sw_chan;

struct wait_node {
    wait_node *next, *prev;
    sw_chan *chan; /* NULL once unlinked (fired, cancelled or the channel collected) */
    waitset *set;
    bool send;
};

struct waitset {
    sw_task_wait base; /* first: the task layer hands this pointer back to cancel */
    sw_task *task;
    bool select;
    int n;
    wait_node nodes[];
};

typedef struct waitq {
    wait_node *head, *tail;
} waitq;

struct sw_chan {
    long cap;          /* SW_CHAN_UNBOUNDED, 0 or a positive capacity */
    double head, tail; /* buffered values are env[head+1 .. tail] */
    bool closed;
    waitq recvq, sendq;
};

static void push_metatable(lua_State *L);

/* ---- wait queues ---- */

static void q_push(waitq *q, wait_node *n)
{
    n->next = NULL;
    n->prev = q->tail;
    if (q->tail) q->tail->next = n;
    else q->head = n;
    q->tail = n;
}

static void q_unlink(waitq *q, wait_node *n)
{
    if (n->prev) n->prev->next = n->next;
    else q->head = n->next;
    if (n->next) n->next->prev = n->prev;
    else q->tail = n->prev;
    n->next = n->prev = NULL;
}

static void node_unlink(wait_node *n)
{
    if (!n->chan) return;
    q_unlink(n->send ? &n->chan->sendq : &n->chan->recvq, n);
    n->chan = NULL;
}

/* Unlinks every node of the set. A blocked sender's value stays in its channel's env table
 * until the channel is collected; that is harmless and rare (only a select that fired on
 * another case leaves one). */
static void set_unlink(waitset *s)
{
    for (int i = 0; i < s->n; i++) node_unlink(&s->nodes[i]);
}

/* A single-channel wait (every receive or send that blocks) reuses its task's last one:
 * a blocking receive then allocates nothing. */
static void set_free(waitset *s)
{
    if (s->n == 1 && s->task && !s->task->wait_mem) s->task->wait_mem = s;
    else free(s);
}

static void set_cancel(sw_task_wait *w)
{
    waitset *s = (waitset *)w;
    set_unlink(s);
    set_free(s);
}

static waitset *set_new(lua_State *L, int n, bool select)
{
    size_t size = sizeof(waitset) + (size_t)n * sizeof(wait_node);
    sw_task *t = sw_task_current(L);
    waitset *s = NULL;
    if (n == 1 && t && t->wait_mem) {
        s = t->wait_mem;
        t->wait_mem = NULL;
        memset(s, 0, size);
    } else if (!(s = calloc(1, size))) {
        luaL_error(L, "out of memory");
    }
    s->base.cancel = set_cancel;
    s->task = t;
    s->select = select;
    s->n = n;
    for (int i = 0; i < n; i++) s->nodes[i].set = s;
    return s;
}

/* ---- the channel userdata ---- */

/* For the methods: each has the channels' metatable as its upvalue, so checking its argument
 * is one pointer comparison (luaL_checkudata looks the metatable up by name every time). */
static sw_chan *check_chan(lua_State *L, int idx)
{
    sw_chan *c = lua_touserdata(L, idx);
    if (c && lua_getmetatable(L, idx)) {
        int ok = lua_rawequal(L, -1, lua_upvalueindex(1));
        lua_pop(L, 1);
        if (ok) return c;
    }
    luaL_typerror(L, idx, CHAN_MT);
    return NULL;
}

/* For the host's C calls, which pass channels they made. */
static sw_chan *to_chan(lua_State *L, int idx) { return lua_touserdata(L, idx); }

static void env_push(lua_State *L, int idx) { lua_getfenv(L, idx); }

/* Buffer keys are whole numbers kept as doubles (a channel's count of values never wraps);
 * below INT_MAX, which is nearly always (the keys restart at 1 whenever the buffer empties),
 * the integer calls reach the table's array part without a number on the stack. */
static bool int_key(double k) { return k <= (double)INT_MAX; }

static void env_seti(lua_State *L, int idx, double k) /* env[k] = top (popped) */
{
    env_push(L, idx);
    lua_pushvalue(L, -2);
    if (int_key(k)) {
        lua_rawseti(L, -2, (int)k);
    } else {
        lua_pushnumber(L, k);
        lua_insert(L, -2);
        lua_rawset(L, -3);
    }
    lua_pop(L, 2);
}

static void env_takei(lua_State *L, int idx, double k) /* push env[k]; env[k] = nil */
{
    env_push(L, idx);
    if (int_key(k)) {
        lua_rawgeti(L, -1, (int)k);
        lua_pushnil(L);
        lua_rawseti(L, -3, (int)k);
    } else {
        lua_pushnumber(L, k);
        lua_rawget(L, -2);
        lua_pushnumber(L, k);
        lua_pushnil(L);
        lua_rawset(L, -4);
    }
    lua_remove(L, -2);
}

static void env_takep(lua_State *L, int idx, void *key) /* push env[key]; env[key] = nil */
{
    env_push(L, idx);
    lua_pushlightuserdata(L, key);
    lua_rawget(L, -2);
    lua_pushlightuserdata(L, key);
    lua_pushnil(L);
    lua_rawset(L, -4);
    lua_remove(L, -2);
}

static void env_setp(lua_State *L, int idx, void *key) /* env[key] = top (popped) */
{
    env_push(L, idx);
    lua_pushlightuserdata(L, key);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 2);
}

static int index_of_chan_result(lua_State *L, int chan_idx, int value_idx, bool ok)
{
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, chan_idx);
    lua_setfield(L, -2, "channel");
    if (value_idx) {
        lua_pushvalue(L, value_idx);
        lua_setfield(L, -2, "value");
    }
    lua_pushboolean(L, ok);
    lua_setfield(L, -2, "ok");
    return 1;
}

/* Wakes the task behind node n of the channel at chan_idx. For a receiver, the value is at
 * value_idx (0: none, the channel closed); for a sender, ok says whether its value was taken. */
static void wake_node(lua_State *L, int chan_idx, wait_node *n, int value_idx, bool ok)
{
    waitset *s = n->set;
    set_unlink(s);
    int nvals;
    if (s->select) {
        nvals = index_of_chan_result(L, chan_idx, n->send ? 0 : value_idx, ok);
    } else if (n->send) {
        lua_pushboolean(L, ok);
        if (!ok) lua_pushliteral(L, "channel closed");
        nvals = ok ? 1 : 2;
    } else {
        if (value_idx) lua_pushvalue(L, value_idx);
        else lua_pushnil(L);
        lua_pushboolean(L, ok);
        nvals = 2;
    }
    sw_task_wake(s->task, L, nvals);
    set_free(s);
}

/* Hands the value at value_idx to the first waiting receiver; false if none waits. */
static bool give_to_receiver(lua_State *L, int chan_idx, sw_chan *c, int value_idx)
{
    wait_node *r = c->recvq.head;
    if (!r) return false;
    wake_node(L, chan_idx, r, value_idx, true);
    return true;
}

static bool has_room(const sw_chan *c) { return c->cap < 0 || c->tail - c->head < (double)c->cap; }

/* Non-blocking send of the value at value_idx. */
static bool try_send(lua_State *L, int chan_idx, sw_chan *c, int value_idx)
{
    if (give_to_receiver(L, chan_idx, c, value_idx)) return true;
    if (!has_room(c)) return false;
    lua_pushvalue(L, value_idx);
    env_seti(L, chan_idx, ++c->tail);
    return true;
}

/* Non-blocking receive: pushes the value and returns true, or returns false. */
static bool try_receive(lua_State *L, int chan_idx, sw_chan *c)
{
    if (c->tail > c->head) {
        env_takei(L, chan_idx, ++c->head);
        wait_node *s = c->sendq.head; /* a blocked sender's value moves into the freed slot */
        if (s) {
            env_takep(L, chan_idx, s);
            env_seti(L, chan_idx, ++c->tail);
            wake_node(L, chan_idx, s, 0, true);
        }
        if (c->tail == c->head) c->head = c->tail = 0; /* empty: keys restart at 1 */
        return true;
    }
    wait_node *s = c->sendq.head;
    if (!s) return false;
    env_takep(L, chan_idx, s);
    wake_node(L, chan_idx, s, 0, true);
    return true;
}

void sw_chan_push_new(lua_State *L, long capacity)
{
    sw_chan *c = lua_newuserdata(L, sizeof *c);
    memset(c, 0, sizeof *c);
    c->cap = capacity;
    lua_newtable(L);
    lua_setfenv(L, -2);
    push_metatable(L);
    lua_setmetatable(L, -2);
}

/* The value on top of L (popped) goes to the task behind r, a plain receive, with true: moved,
 * not copied (the host's offers, e.g. every message to a process blocked in inbox:receive()). */
static void hand_over(lua_State *L, wait_node *r)
{
    waitset *s = r->set;
    set_unlink(s);
    lua_pushboolean(L, 1);
    sw_task_wake(s->task, L, 2);
    set_free(s);
}

bool sw_chan_offer(lua_State *L, int idx)
{
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    sw_chan *c = to_chan(L, idx);
    wait_node *r = c->recvq.head;
    if (!c->closed && r && !r->set->select) {
        hand_over(L, r);
        return true;
    }
    bool ok = !c->closed && try_send(L, idx, c, lua_gettop(L));
    lua_pop(L, 1);
    return ok;
}

void sw_chan_filter(lua_State *L, int idx, bool (*keep)(lua_State *L, int value_idx, void *ud),
                    void *ud)
{
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    sw_chan *c = to_chan(L, idx);
    double write = c->head;
    for (double k = c->head + 1; k <= c->tail; k++) {
        env_takei(L, idx, k);
        if (keep(L, lua_gettop(L), ud)) env_seti(L, idx, ++write);
        else lua_pop(L, 1);
    }
    c->tail = write;
}

size_t sw_chan_buffered(const void *chan)
{
    const sw_chan *c = chan;
    return (size_t)(c->tail - c->head);
}

void sw_chan_close_at(lua_State *L, int idx)
{
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    sw_chan *c = to_chan(L, idx);
    if (c->closed) return;
    c->closed = true;
    while (c->recvq.head) wake_node(L, idx, c->recvq.head, 0, false);
    while (c->sendq.head) {
        wait_node *s = c->sendq.head;
        env_takep(L, idx, s);
        lua_pop(L, 1);
        wake_node(L, idx, s, 0, false);
    }
}

/* ---- Lua methods ---- */

int sw_chan_new_lua(lua_State *L)
{
    lua_Number cap = luaL_optnumber(L, 1, 0);
    if (cap < 0 || cap != (lua_Number)(long)cap)
        return luaL_argerror(L, 1, "capacity must be a whole number >= 0");
    sw_chan_push_new(L, (long)cap);
    return 1;
}

static int block_on(lua_State *L, int chan_idx, sw_chan *c, bool send)
{
    waitset *s = set_new(L, 1, false);
    wait_node *n = &s->nodes[0];
    n->send = send;
    n->chan = c;
    if (send) {
        lua_pushvalue(L, 2);
        env_setp(L, chan_idx, n);
    }
    q_push(send ? &c->sendq : &c->recvq, n);
    return sw_task_block(L, &s->base);
}

static int chan_send(lua_State *L)
{
    sw_chan *c = check_chan(L, 1);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    if (c->closed) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "channel closed");
        return 2;
    }
    if (try_send(L, 1, c, 2)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return block_on(L, 1, c, true);
}

static int chan_receive(lua_State *L)
{
    sw_chan *c = check_chan(L, 1);
    lua_settop(L, 1);
    if (try_receive(L, 1, c)) {
        lua_pushboolean(L, 1);
        return 2;
    }
    if (c->closed) {
        lua_pushnil(L);
        lua_pushboolean(L, 0);
        return 2;
    }
    return block_on(L, 1, c, false);
}

static int chan_close(lua_State *L)
{
    check_chan(L, 1);
    sw_chan_close_at(L, 1);
    return 0;
}

/* A select case is {chan, "recv"} or {chan, "send", value}. */
static int chan_case(lua_State *L, bool send)
{
    check_chan(L, 1);
    if (send) luaL_checkany(L, 2);
    lua_createtable(L, 3, 0);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pushstring(L, send ? "send" : "recv");
    lua_rawseti(L, -2, 2);
    if (send) {
        lua_pushvalue(L, 2);
        lua_rawseti(L, -2, 3);
    }
    return 1;
}

static int chan_case_receive(lua_State *L) { return chan_case(L, false); }
static int chan_case_send(lua_State *L) { return chan_case(L, true); }

static int chan_gc(lua_State *L)
{
    sw_chan *c = lua_touserdata(L, 1);
    while (c->recvq.head) node_unlink(c->recvq.head);
    while (c->sendq.head) node_unlink(c->sendq.head);
    return 0;
}

static int chan_tostring(lua_State *L)
{
    lua_pushfstring(L, "channel: %p", lua_touserdata(L, 1));
    return 1;
}

/* ---- select ---- */

/* Pushes case i's channel and checks it; returns the channel and whether it is a send. */
static sw_chan *select_case(lua_State *L, int i, bool *send)
{
    lua_rawgeti(L, 1, i);
    if (!lua_istable(L, -1))
        luaL_error(L, "bad argument #1 to 'select' (case %d is not a channel case)", i);
    lua_rawgeti(L, -1, 1);
    sw_chan *c = luaL_testudata(L, -1, CHAN_MT);
    if (!c) luaL_error(L, "bad argument #1 to 'select' (case %d has no channel)", i);
    lua_rawgeti(L, -2, 2);
    *send = strcmp(lua_tostring(L, -1), "send") == 0;
    lua_pop(L, 1);
    return c; /* stack: case, chan */
}

/* Tries case i without blocking; pushes its result table and returns true when it fires. */
static bool select_try(lua_State *L, int i)
{
    bool send;
    sw_chan *c = select_case(L, i, &send);
    int chan_idx = lua_gettop(L), top = chan_idx;
    bool fired = false;
    if (send) {
        lua_rawgeti(L, chan_idx - 1, 3);
        if (c->closed) {
            index_of_chan_result(L, chan_idx, 0, false);
            fired = true;
        } else if (try_send(L, chan_idx, c, lua_gettop(L))) {
            index_of_chan_result(L, chan_idx, 0, true);
            fired = true;
        }
    } else if (try_receive(L, chan_idx, c)) {
        index_of_chan_result(L, chan_idx, lua_gettop(L), true);
        fired = true;
    } else if (c->closed) {
        index_of_chan_result(L, chan_idx, 0, false);
        fired = true;
    }
    if (fired) lua_replace(L, top - 1);
    lua_settop(L, fired ? top - 1 : top - 2);
    return fired;
}

int sw_chan_select_lua(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    int n = (int)lua_objlen(L, 1);
    for (int i = 1; i <= n; i++)
        if (select_try(L, i)) return 1;
    lua_getfield(L, 1, "default");
    if (lua_toboolean(L, -1)) {
        lua_createtable(L, 0, 1);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "default");
        return 1;
    }
    if (n == 0) return luaL_error(L, "select with no cases and no default would block forever");
    lua_pop(L, 1);
    waitset *s = set_new(L, n, true);
    for (int i = 1; i <= n; i++) {
        bool send;
        sw_chan *c = select_case(L, i, &send);
        wait_node *node = &s->nodes[i - 1];
        node->send = send;
        node->chan = c;
        if (send) {
            lua_rawgeti(L, -2, 3);
            env_setp(L, lua_gettop(L) - 1, node);
        }
        q_push(send ? &c->sendq : &c->recvq, node);
        lua_pop(L, 2);
    }
    return sw_task_block(L, &s->base);
}

/* Pushes the channels' metatable, made on first use (inbox and events make channels in
 * processes that never open the channel module). */
static void push_metatable(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"send", chan_send},           {"receive", chan_receive},
        {"close", chan_close},         {"case_receive", chan_case_receive},
        {"case_send", chan_case_send}, {NULL, NULL}};
    if (!luaL_newmetatable(L, CHAN_MT)) return;
    lua_createtable(L, 0, 5); /* sized up front: no rehash while filling it */
    lua_pushvalue(L, -2);
    luaL_openlib(L, NULL, methods, 1); /* each method gets the metatable as its upvalue */
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, chan_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, chan_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "channel");
    lua_setfield(L, -2, "__metatable");
}
