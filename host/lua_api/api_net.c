/* The `net` module: TCP and unix-domain stream sockets (README "Network"). net.listen and
 * net.connect, guarded as net.listen / net.connect on "tcp:HOST:PORT" or "unix:PATH"; listener
 * and connection objects whose blocking calls follow the five steps (check, arm, register the
 * cleanup, yield, resume) on the runtime's sockets (runtime/net.h). An object reads as closed
 * once closed, in another process, or after its process lost it; __gc closes it. */
#include <lauxlib.h>
#include <string.h>

#include "api.h"
#include "net.h"
#include "proc.h"
#include "task.h"

typedef struct net_obj {
    sw_sock *s; /* NULL once closed (net.c clears it) */
} net_obj;

static const char conn_key = 0, listener_key = 0; /* their metatables, by address */

/* ---- results ---- */

static int fail_err(lua_State *L, int err) { return sw_api_fail(L, sw_net_strerror(err)); }

static int timeout(lua_State *L) { return sw_api_fail(L, "timeout"); }

/* An optional duration at idx: nanoseconds, or -1 for none. */
static int64_t opt_timeout(lua_State *L, int idx)
{
    return lua_isnoneornil(L, idx) ? -1 : sw_api_check_duration(L, idx);
}

static size_t check_count(lua_State *L, int idx)
{
    lua_Number n = luaL_checknumber(L, idx);
    if (!(n >= 1 && n <= 2147483647.0))
        luaL_argerror(L, idx, "expected a byte count of at least 1");
    return (size_t)n;
}

/* The socket of the object at 1, or NULL when it is closed or belongs to another process. */
static sw_sock *check_sock(lua_State *L, const void *key, const char *tname)
{
    net_obj *o = sw_api_checkudata(L, 1, key, tname);
    return o->s && sw_net_owner(o->s) == sw_proc_of(L) && sw_net_usable(o->s) ? o->s : NULL;
}

static sw_sock *check_conn(lua_State *L) { return check_sock(L, &conn_key, "net.conn"); }
static sw_sock *check_listener(lua_State *L)
{
    return check_sock(L, &listener_key, "net.listener");
}

static void push_obj(lua_State *L, sw_sock *s, const void *key, void (*init)(lua_State *L))
{
    net_obj *o = lua_newuserdata(L, sizeof *o);
    o->s = NULL;
    sw_api_push_metatable(L, key, init);
    lua_setmetatable(L, -2);
    sw_net_bind(s, &o->s);
}

static void init_conn(lua_State *L);
static void push_conn(lua_State *L, sw_sock *s) { push_obj(L, s, &conn_key, init_conn); }

/* ---- the five steps ----
 * run_op checks (the step may complete at once: no yield), then arms the side's wait (task,
 * step, timeout; its cancel disarms it if the task is freed), yields, and the step's results
 * are the call's once a later IO delivery lets it complete (runtime/net.c settle). */

static int run_op(lua_State *L, sw_sock *s, sw_net_side side, sw_net_step step, size_t n,
                  int64_t timeout_ns)
{
    sw_net_wait *w = sw_net_waiter(s, side);
    if (w->task)
        return sw_api_fail(L, side == SW_NET_IN ? "busy: another task is reading"
                                                : "busy: another task is writing");
    w->step = step;
    w->n = n;
    w->got = 0;
    w->parts = LUA_NOREF;
    w->close_after = false;
    sw_task *t = sw_task_current(L);
    bool can_wait = t && lua_isyieldable(L);
    int k = step(w, L, false);
    bool gave_up = false;
    if (k < 0 &&
        (timeout_ns == 0 || !can_wait)) { /* no waiting: the step gives up (and cleans up) */
        k = step(w, L, true);
        gave_up = true;
    }
    if (w->close_after) {
        w->close_after = false;
        sw_net_close(s, L);
    }
    if (k < 0) {
        sw_net_arm(w, t, timeout_ns);
        return sw_task_block(L, &w->base);
    }
    if (gave_up &&
        timeout_ns != 0) { /* it had to wait where no task can: raise as blocking calls do */
        lua_pop(L, k);
        return sw_task_block(L, NULL);
    }
    return k;
}

/* ---- reading ---- */

static int step_read(sw_net_wait *w, lua_State *L, bool give_up)
{
    sw_sock *s = w->sock;
    if (!sw_net_usable(s)) return sw_api_fail(L, "closed");
    size_t have;
    const char *b = sw_net_peek(s, &have);
    if (have) {
        size_t k = have < w->n ? have : w->n;
        lua_pushlstring(L, b, k);
        sw_net_consume(s, k);
        return 1;
    }
    if (sw_net_read_end(s)) return fail_err(L, sw_net_read_end(s));
    return give_up ? timeout(L) : -1;
}

static int step_read_line(sw_net_wait *w, lua_State *L, bool give_up)
{
    sw_sock *s = w->sock;
    if (!sw_net_usable(s)) return sw_api_fail(L, "closed");
    size_t have;
    const char *b = sw_net_peek(s, &have);
    const char *nl = memchr(b, '\n', have);
    if (nl || (have && sw_net_read_end(s))) { /* a line, or the last one without its "\n" */
        size_t len = nl ? (size_t)(nl - b) : have;
        lua_pushlstring(L, b, len && nl && b[len - 1] == '\r' ? len - 1 : len);
        sw_net_consume(s, nl ? len + 1 : len);
        return 1;
    }
    if (sw_net_read_end(s)) return fail_err(L, sw_net_read_end(s));
    if (have >= SW_NET_READ_BUFFER) return sw_api_fail(L, "line too long");
    return give_up ? timeout(L) : -1;
}

static void drop_parts(sw_net_wait *w, lua_State *L)
{
    if (w->parts != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, w->parts);
    w->parts = LUA_NOREF;
}

/* read_exact beyond the buffer's size: what came so far moves into a table of pieces in the
 * process's own heap (its memory limit applies), and the buffer reads on. */
static void keep_part(sw_net_wait *w, lua_State *L, const char *b, size_t len)
{
    if (w->parts == LUA_NOREF) {
        lua_newtable(L);
        w->parts = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->parts);
    lua_pushlstring(L, b, len);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    lua_pop(L, 1);
    w->got += len;
    sw_net_consume(w->sock, len);
}

static void push_exact(sw_net_wait *w, lua_State *L, const char *b, size_t len)
{
    if (w->parts == LUA_NOREF) {
        lua_pushlstring(L, b, len);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->parts);
    int t = lua_gettop(L);
    luaL_Buffer buf;
    luaL_buffinit(L, &buf);
    for (int i = 1, n = (int)lua_objlen(L, t); i <= n; i++) {
        lua_rawgeti(L, t, i);
        luaL_addvalue(&buf);
    }
    luaL_addlstring(&buf, b, len);
    luaL_pushresult(&buf);
    lua_remove(L, t);
    drop_parts(w, L);
}

static int step_read_exact(sw_net_wait *w, lua_State *L, bool give_up)
{
    sw_sock *s = w->sock;
    if (!sw_net_usable(s)) {
        drop_parts(w, L);
        return sw_api_fail(L, "closed");
    }
    size_t have, need = w->n - w->got;
    const char *b = sw_net_peek(s, &have);
    if (have >= need) {
        push_exact(w, L, b, need);
        sw_net_consume(s, need);
        return 1;
    }
    int end = sw_net_read_end(s);
    if (end || give_up) {
        drop_parts(w, L);
        return end ? fail_err(L, end) : timeout(L);
    }
    if (w->n > SW_NET_READ_BUFFER && have) keep_part(w, L, b, have);
    return -1;
}

static int c_read(lua_State *L)
{
    sw_sock *s = check_conn(L);
    size_t n = check_count(L, 2);
    int64_t t = opt_timeout(L, 3);
    return s ? run_op(L, s, SW_NET_IN, step_read, n, t) : sw_api_fail(L, "closed");
}

static int c_read_line(lua_State *L)
{
    sw_sock *s = check_conn(L);
    int64_t t = opt_timeout(L, 2);
    return s ? run_op(L, s, SW_NET_IN, step_read_line, 0, t) : sw_api_fail(L, "closed");
}

static int c_read_exact(lua_State *L)
{
    sw_sock *s = check_conn(L);
    size_t n = check_count(L, 2);
    int64_t t = opt_timeout(L, 3);
    return s ? run_op(L, s, SW_NET_IN, step_read_exact, n, t) : sw_api_fail(L, "closed");
}

/* ---- writing and closing ---- */

static int step_drain(sw_net_wait *w, lua_State *L, bool give_up)
{
    if (!sw_net_usable(w->sock)) return sw_api_fail(L, "closed");
    int d = sw_net_drained(w->sock, false);
    if (d < 0) return fail_err(L, d);
    if (d) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return give_up ? timeout(L) : -1;
}

static int c_write(lua_State *L)
{
    sw_sock *s = check_conn(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    int64_t t = opt_timeout(L, 3);
    if (!s) return sw_api_fail(L, "closed");
    if (sw_net_waiter(s, SW_NET_OUT)->task) return sw_api_fail(L, "busy: another task is writing");
    int rc = sw_net_write(s, data, len);
    if (rc < 0) return fail_err(L, rc);
    if (rc == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return run_op(L, s, SW_NET_OUT, step_drain, 0, t); /* queued past the bound: wait for room */
}

/* close's flush: the socket is closed in any case once this returns. */
static int step_flush(sw_net_wait *w, lua_State *L, bool give_up)
{
    if (sw_net_closed(w->sock)) {
        lua_pushboolean(L, 1);
        return 1;
    } /* closed under it (process end) */
    int d = sw_net_drained(w->sock, true);
    if (d == 0 && !give_up) return -1;
    w->close_after = true;
    if (d < 0) return fail_err(L, d);
    if (d == 0) return timeout(L);
    lua_pushboolean(L, 1);
    return 1;
}

static int c_close(lua_State *L)
{
    sw_sock *s = check_conn(L);
    int64_t t = opt_timeout(L, 2);
    if (!s) {
        lua_pushboolean(L, 1);
        return 1;
    }
    sw_net_close_begin(s, L); /* the object reads closed now; tasks waiting on it get "closed" */
    if (!sw_task_current(L) || !lua_isyieldable(L)) { /* no task to wait in: close now */
        sw_net_close(s, L);
        lua_pushboolean(L, 1);
        return 1;
    }
    return run_op(L, s, SW_NET_OUT, step_flush, 0, t);
}

static int push_name(lua_State *L, bool peer)
{
    sw_sock *s = check_conn(L);
    if (!s) return sw_api_fail(L, "closed");
    char name[160];
    int rc = sw_net_name(s, peer, name, sizeof name);
    if (rc) return fail_err(L, rc);
    lua_pushstring(L, name);
    return 1;
}

static int c_peer(lua_State *L) { return push_name(L, true); }
static int c_local_addr(lua_State *L) { return push_name(L, false); }

static int obj_gc(lua_State *L)
{
    net_obj *o = lua_touserdata(L, 1);
    if (o->s) sw_net_close(o->s, NULL); /* unreachable: nobody waits on it */
    return 0;
}

static int conn_tostring(lua_State *L)
{
    lua_pushfstring(L, "net.conn: %p", lua_touserdata(L, 1));
    return 1;
}

static void init_metatable(lua_State *L, const luaL_Reg *methods, const char *name,
                           lua_CFunction tostring)
{
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, obj_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__metatable");
}

static void init_conn(lua_State *L)
{
    static const luaL_Reg methods[] = {{"read", c_read},
                                       {"read_line", c_read_line},
                                       {"read_exact", c_read_exact},
                                       {"write", c_write},
                                       {"close", c_close},
                                       {"peer", c_peer},
                                       {"local_addr", c_local_addr},
                                       {NULL, NULL}};
    init_metatable(L, methods, "net.conn", conn_tostring);
}

/* ---- listeners ---- */

static int step_accept(sw_net_wait *w, lua_State *L, bool give_up)
{
    if (!sw_net_usable(w->sock)) return sw_api_fail(L, "closed");
    sw_sock *c;
    int rc = sw_net_accept(w->sock, &c);
    if (rc < 0) return fail_err(L, rc);
    if (c) {
        push_conn(L, c);
        return 1;
    }
    return give_up ? timeout(L) : -1;
}

static int l_accept(lua_State *L)
{
    sw_sock *s = check_listener(L);
    int64_t t = opt_timeout(L, 2);
    return s ? run_op(L, s, SW_NET_IN, step_accept, 0, t) : sw_api_fail(L, "closed");
}

static int l_addr(lua_State *L)
{
    sw_sock *s = check_listener(L);
    if (!s) return sw_api_fail(L, "closed");
    char name[160];
    int rc = sw_net_name(s, false, name, sizeof name);
    if (rc) return fail_err(L, rc);
    lua_pushstring(L, name);
    return 1;
}

static int l_close(lua_State *L)
{
    sw_sock *s = check_listener(L);
    if (s) sw_net_close(s, L); /* a task waiting in accept gets nil, "closed" */
    lua_pushboolean(L, 1);
    return 1;
}

static int listener_tostring(lua_State *L)
{
    lua_pushfstring(L, "net.listener: %p", lua_touserdata(L, 1));
    return 1;
}

static void init_listener(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"accept", l_accept}, {"addr", l_addr}, {"close", l_close}, {NULL, NULL}};
    init_metatable(L, methods, "net.listener", listener_tostring);
}

/* ---- the module ---- */

/* Parses the address at 1 and checks the guard: 0, or the count of (nil, err) pushed. */
static int prepare(lua_State *L, const char *action, sw_net_addr *a)
{
    const char *uri = luaL_checkstring(L, 1);
    char resource[sizeof a->path + 16], err[300];
    if (sw_net_addr_parse(uri, a, resource, sizeof resource, err, sizeof err) != 0)
        return sw_api_fail(L, err);
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && !ctx->allowed(L, action, resource))
        return sw_push_denied(L, action, resource);
    return 0;
}

static int n_listen(lua_State *L)
{
    sw_net_addr a;
    int n = prepare(L, "net.listen", &a);
    if (n) return n;
    int err;
    sw_sock *s = sw_net_listen(sw_proc_of(L), &a, &err);
    if (!s) return fail_err(L, err);
    push_obj(L, s, &listener_key, init_listener);
    return 1;
}

static int step_connect(sw_net_wait *w, lua_State *L, bool give_up)
{
    if (sw_net_closed(w->sock)) return sw_api_fail(L, "closed");
    int c = sw_net_connected(w->sock);
    if (c > 0) {
        push_conn(L, w->sock);
        return 1;
    }
    if (c == 0 && !give_up) return -1;
    w->close_after = true; /* no object holds it yet: it goes with the failure */
    return c < 0 ? fail_err(L, c) : timeout(L);
}

static int n_connect(lua_State *L)
{
    int64_t t = -1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_getfield(L, 2, "timeout");
        lua_replace(L, 2); /* a bad one is "bad argument #2" */
        t = opt_timeout(L, 2);
    }
    lua_settop(L, 1);
    sw_net_addr a;
    int n = prepare(L, "net.connect", &a);
    if (n) return n;
    int err;
    sw_sock *s = sw_net_connect(sw_proc_of(L), &a, &err);
    if (!s) return fail_err(L, err);
    return run_op(L, s, SW_NET_OUT, step_connect, 0, t);
}

int sw_open_net(lua_State *L)
{
    static const luaL_Reg fns[] = {{"listen", n_listen}, {"connect", n_connect}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
