/* The `process` module: identity, spawning, messages, events, monitors, links and names.
 * Every function runs on the thread running the calling process; other processes are reached
 * only through deliveries. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_identity.h"
#include "message.h"
#include "proc.h"
#include "runtime.h"


/* ---- helpers ---- */

uint64_t sw_api_resolve(lua_State *L, const char *dest)
{
    uint64_t id = sw_pid_parse(dest);
    if (id) return id;
    return sw_pidtable_lookup(&sw_proc_of(L)->rt->pids, dest);
}

static uint64_t check_pid(lua_State *L, int idx)
{
    const char *s = luaL_checkstring(L, idx);
    return sw_api_resolve(L, s);
}

/* The host's check of a call that acts on another process or on a name, on the target as
 * given (a name, or a pid string), before anything else happens. false: nil and "permission
 * denied: <action> on <resource>" are pushed; the caller returns 2. */
static bool guard(lua_State *L, const char *action, const char *resource)
{
    const sw_proc_ctx *ctx = &sw_proc_of(L)->ctx;
    if (!ctx->allowed || ctx->allowed(L, action, resource)) return true;
    sw_push_denied(L, action, resource);
    return false;
}

static int deliver(lua_State *L, uint64_t to, sw_delivery_type type, uint64_t ref,
                   const char *topic, const sw_msgbuf *payload)
{
    sw_proc *p = sw_proc_of(L);
    sw_delivery *d = sw_delivery_new(type, p->id, ref, topic, payload ? payload->data : NULL,
                                     payload ? payload->len : 0);
    if (!d) return -1;
    return sw_runtime_deliver(p->rt, to, d);
}

/* Encodes the values first..top into a fresh buffer; on failure returns -1 with err. */
static int encode_args(lua_State *L, int first, sw_msgbuf *buf, char *err, size_t errlen)
{
    sw_msgbuf_init(buf);
    int n = lua_gettop(L) - first + 1;
    if (n < 0) n = 0;
    return sw_msg_encode(L, first, n, sw_proc_of(L)->rt->max_message, buf, err, errlen);
}

/* ---- identity and spawning ---- */

static int p_pid(lua_State *L)
{
    lua_pushstring(L, sw_proc_of(L)->pid);
    return 1;
}

enum { SPAWN_MONITOR = SW_API_SPAWN_MONITOR, SPAWN_LINK = SW_API_SPAWN_LINK };

const sw_entry *sw_api_spawn_entry(lua_State *L, const char *id)
{
    sw_proc *p = sw_proc_of(L);
    char full[256];
    if (!strchr(id, ':')) snprintf(full, sizeof full, "%s:%s", p->entry->ns, id), id = full;
    /* Guarded before the lookup, so a denied process cannot learn which ids exist. */
    if (p->ctx.allowed && !p->ctx.allowed(L, "process.spawn", id)) {
        sw_push_denied(L, "process.spawn", id);
        return NULL;
    }
    const sw_entry *e = sw_registry_get(p->ctx.registry, id);
    if (!e || e->kind != SW_KIND_PROCESS_LUA) {
        lua_pushnil(L);
        lua_pushfstring(L, e ? "%s is not a process.lua" : "no process.lua %s", id);
        return NULL;
    }
    return e;
}

/* The per-process bounds on what a process holds (docs/security.md "Limits"): NULL if one more
 * monitor (SPAWN_MONITOR) and link (SPAWN_LINK) fit, else the error. */
static const char *over_bounds(const sw_proc *p, int flags)
{
    if ((flags & SPAWN_MONITOR) && p->monitoring.n >= (size_t)p->rt->limits.monitors)
        return "too many monitors";
    if ((flags & SPAWN_LINK) && p->links.n >= (size_t)p->rt->limits.links) return "too many links";
    return NULL;
}

/* The spawn family; the child runs as identity (process.with_context), else as the caller. */
int sw_api_spawn_as(lua_State *L, int flags, sw_sec_identity *identity)
{
    sw_proc *p = sw_proc_of(L);
    const char *id = luaL_checkstring(L, 1);
    const char *host = luaL_optstring(L, 2, NULL);
    const sw_entry *e = sw_api_spawn_entry(L, id);
    if (!e) return 2;
    const char *over = over_bounds(p, flags);
    if (over) return sw_api_fail(L, over);
    char host_full[256];
    if (host && !strchr(host, ':')) { /* relative, as for the id: in the caller's namespace */
        snprintf(host_full, sizeof host_full, "%s:%s", p->entry->ns, host);
        host = host_full;
    }
    sw_workers *pool = host ? sw_runtime_pool(p->rt, host) : NULL;
    if (host && !pool) {
        lua_pushnil(L);
        lua_pushfstring(L, "no process.host %s", host);
        return 2;
    }
    char err[256];
    sw_msgbuf args;
    if (encode_args(L, 3, &args, err, sizeof err) != 0) {
        sw_msgbuf_free(&args);
        return sw_api_fail(L, err);
    }
    sw_spawn s = {.entry = e,
                  .registry = p->ctx.registry,
                  .service = p->service,
                  .args = args.data,
                  .args_len = args.len,
                  .pool = pool,
                  .parent = p,
                  .identity = identity ? identity : p->identity};
    if (!pool) s.worker = p->worker;
    if (flags & SPAWN_MONITOR) {
        s.monitor_by = p->id;
        s.monitor_ref = sw_proc_new_ref(p);
    }
    if (flags & SPAWN_LINK) s.link_to = p->id;
    uint64_t child = sw_proc_spawn(p->rt, &s, err, sizeof err);
    sw_msgbuf_free(&args);
    if (!child) return sw_api_fail(L, err);
    if (flags & SPAWN_MONITOR) {
        pidvec_push(&p->monitoring, child);
        pidvec_push(&p->monitoring_refs, s.monitor_ref);
    }
    if (flags & SPAWN_LINK) pidvec_push(&p->links, child);
    char pid[32];
    sw_pid_format(child, pid, sizeof pid);
    lua_pushstring(L, pid);
    return 1;
}

static int p_spawn(lua_State *L) { return sw_api_spawn_as(L, 0, NULL); }
static int p_spawn_monitored(lua_State *L) { return sw_api_spawn_as(L, SPAWN_MONITOR, NULL); }
static int p_spawn_linked(lua_State *L) { return sw_api_spawn_as(L, SPAWN_LINK, NULL); }
static int p_spawn_linked_monitored(lua_State *L)
{
    return sw_api_spawn_as(L, SPAWN_LINK | SPAWN_MONITOR, NULL);
}

/* ---- messages and events ---- */

/* The process behind pid `to`, from the sender's one-entry cache or the pid table (then
 * cached, with a reference). A chatty pair thus skips the table's lock on every send. */
static sw_proc *send_target(sw_proc *self, uint64_t to)
{
    if (self->send_to && self->send_to_id == to) return self->send_to;
    sw_proc *p = sw_pidtable_grab(&self->rt->pids, to);
    if (!p) return NULL;
    if (self->send_to) sw_proc_release(self->send_to);
    self->send_to = p;
    self->send_to_id = to;
    return p;
}

static void forget_target(sw_proc *self)
{
    if (self->send_to) sw_proc_release(self->send_to);
    self->send_to = NULL;
}

static int p_send(lua_State *L)
{
    const char *dest = luaL_checkstring(L, 1);
    const char *topic = luaL_checkstring(L, 2);
    sw_proc *self = sw_proc_of(L);
    if (self->ctx.allowed && !self->ctx.allowed(L, "process.send", dest))
        return sw_push_denied(L, "process.send", dest);
    uint64_t to = sw_api_resolve(L, dest);
    if (!to) return sw_api_fail(L, "no such process");
    char err[256];
    sw_msgbuf *payload = &self->sendbuf; /* reused: no allocation per send */
    int n = lua_gettop(L) - 2;
    if (sw_msg_encode(L, 3, n, self->rt->max_message, payload, err, sizeof err) != 0)
        return sw_api_fail(L, err);
    sw_proc *target = send_target(self, to);
    sw_delivery *d =
        target ? sw_delivery_new(SW_DLV_MESSAGE, self->id, 0, topic, payload->data, payload->len)
               : NULL;
    int rc = !target ? SW_SEND_DEAD : !d ? SW_SEND_NO_MEMORY : sw_proc_send(target, d);
    if (rc != SW_SEND_OK) { /* refused: nothing was queued (a dead process's is simply dropped) */
        const char *why = rc == SW_SEND_FULL ? "mailbox full"
                          : rc == SW_SEND_NO_MEMORY
                              ? (d ? "host memory limit reached" : "out of memory")
                              : "no such process";
        free(d);
        if (rc == SW_SEND_DEAD) forget_target(self);
        return sw_api_fail(L, why);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int p_inbox(lua_State *L)
{
    sw_proc_push_inbox(sw_proc_of(L), L);
    return 1;
}

static int p_events(lua_State *L)
{
    sw_proc_push_events(sw_proc_of(L), L);
    return 1;
}

static int p_cancel(lua_State *L)
{
    if (!guard(L, "process.cancel", luaL_checkstring(L, 1))) return 2;
    uint64_t to = check_pid(L, 1);
    char err[256];
    sw_msgbuf reason;
    lua_settop(L, 2);
    if (encode_args(L, 2, &reason, err, sizeof err) != 0) {
        sw_msgbuf_free(&reason);
        return sw_api_fail(L, err);
    }
    int rc = to ? deliver(L, to, SW_DLV_CANCEL, 0, NULL, &reason) : -1;
    sw_msgbuf_free(&reason);
    if (rc != 0) return sw_api_fail(L, "no such process");
    lua_pushboolean(L, 1);
    return 1;
}

static int p_terminate(lua_State *L)
{
    if (!guard(L, "process.terminate", luaL_checkstring(L, 1))) return 2;
    uint64_t to = check_pid(L, 1);
    if (!to || sw_runtime_kill(sw_proc_of(L)->rt, to) != 0)
        return sw_api_fail(L, "no such process");
    lua_pushboolean(L, 1);
    return 1;
}

/* An EXIT for a process that is already gone, straight into our own events channel. */
static void exit_now(lua_State *L, uint64_t target)
{
    char pid[32];
    sw_pid_format(target, pid, sizeof pid);
    sw_proc_push_events(sw_proc_of(L), L);
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, SW_EVENT_EXIT);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, pid);
    lua_setfield(L, -2, "from");
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "no such process");
    lua_setfield(L, -2, "error");
    lua_setfield(L, -2, "result");
    sw_chan_offer(L, -2);
    lua_pop(L, 1);
}

static int p_monitor(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    if (!guard(L, "process.monitor", luaL_checkstring(L, 1))) return 2;
    const char *over = over_bounds(p, SPAWN_MONITOR);
    if (over) return sw_api_fail(L, over);
    uint64_t to = check_pid(L, 1);
    uint64_t ref = sw_proc_new_ref(p);
    if (!to || deliver(L, to, SW_DLV_MONITOR, ref, NULL, NULL) != 0) {
        exit_now(L, to ? to : sw_pid_parse(lua_tostring(L, 1)));
    } else {
        pidvec_push(&p->monitoring, to);
        pidvec_push(&p->monitoring_refs, ref);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* Is the value at idx an EXIT event from `from` (a pid string)? Read raw: a user may have put
 * anything in the channel. */
static bool is_exit_from(lua_State *L, int idx, const char *from)
{
    if (lua_type(L, idx) != LUA_TTABLE) return false;
    lua_pushliteral(L, "kind");
    lua_rawget(L, idx < 0 ? idx - 1 : idx);
    lua_pushliteral(L, "from");
    lua_rawget(L, idx < 0 ? idx - 2 : idx);
    bool is = lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), SW_EVENT_EXIT) == 0 &&
              lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), from) == 0;
    lua_pop(L, 2);
    return is;
}

/* unmonitor promises that no EXIT arrives after it, even one this slice's deliveries already
 * put in the events channel: such events are taken out, the rest keep their order. */
static bool not_exit_from(lua_State *L, int idx, void *from) { return !is_exit_from(L, idx, from); }

static void purge_exit_events(lua_State *L, sw_proc *p, uint64_t from_id)
{
    if (p->events_ref == LUA_NOREF) return;
    char from[32];
    sw_pid_format(from_id, from, sizeof from);
    sw_proc_push_events(p, L);
    sw_chan_filter(L, -1, not_exit_from, from);
    lua_pop(L, 1);
}

static int p_unmonitor(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    uint64_t to = check_pid(L, 1);
    if (to) purge_exit_events(L, p, to);
    for (size_t i = p->monitoring.n; i-- > 0;) {
        if (p->monitoring.v[i] != to) continue;
        deliver(L, to, SW_DLV_DEMONITOR, p->monitoring_refs.v[i], NULL, NULL);
        memmove(p->monitoring.v + i, p->monitoring.v + i + 1,
                (p->monitoring.n - i - 1) * sizeof(uint64_t));
        memmove(p->monitoring_refs.v + i, p->monitoring_refs.v + i + 1,
                (p->monitoring.n - i - 1) * sizeof(uint64_t));
        p->monitoring.n--;
        p->monitoring_refs.n--;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int p_link(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    if (!guard(L, "process.link", luaL_checkstring(L, 1))) return 2;
    uint64_t to = check_pid(L, 1);
    if (!to || to == p->id) return sw_api_fail(L, to ? "cannot link to itself" : "no such process");
    bool linked = false;
    for (size_t i = 0; i < p->links.n && !linked; i++) linked = p->links.v[i] == to;
    const char *over = linked ? NULL : over_bounds(p, SPAWN_LINK);
    if (over) return sw_api_fail(L, over);
    if (deliver(L, to, SW_DLV_LINK, 0, NULL, NULL) != 0) return sw_api_fail(L, "no such process");
    pidvec_remove(&p->links, to);
    pidvec_push(&p->links, to);
    lua_pushboolean(L, 1);
    return 1;
}

static int p_unlink(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    uint64_t to = check_pid(L, 1);
    if (pidvec_remove(&p->links, to)) deliver(L, to, SW_DLV_UNLINK, 0, NULL, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

static int p_set_options(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "trap_links");
    if (!lua_isnil(L, -1)) sw_proc_of(L)->trap_links = lua_toboolean(L, -1);
    lua_pushboolean(L, 1);
    return 1;
}

static int p_ready(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    if (p->on_ready) {
        p->on_ready(p->cb_arg, p->id);
        p->on_ready = NULL; /* once */
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- names ----
 * Each call is guarded on the name as given. A name is released by the process that
 * registered it or the one it names, or when the process it names ends. */

static int r_register(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!guard(L, "process.register", name)) return 2;
    uint64_t id = lua_isnoneornil(L, 2) ? p->id : check_pid(L, 2);
    if (!id || strncmp(name, "host|", 5) == 0)
        return sw_api_fail(L, id ? "names may not look like pids" : "no such process");
    switch (sw_pidtable_register(&p->rt->pids, name, id, p->id, (size_t)p->rt->limits.names)) {
    case SW_NAME_OK: break;
    case SW_NAME_TAKEN: return sw_api_fail(L, "name already registered");
    case SW_NAME_TOO_MANY: return sw_api_fail(L, "too many names");
    default: return sw_api_fail(L, "no such process");
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int r_lookup(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (!guard(L, "process.lookup", name)) return 2;
    uint64_t id = sw_pidtable_lookup(&sw_proc_of(L)->rt->pids, name);
    if (!id) return sw_api_fail(L, "no process registered under that name");
    char pid[32];
    sw_pid_format(id, pid, sizeof pid);
    lua_pushstring(L, pid);
    return 1;
}

static int r_unregister(lua_State *L)
{
    sw_proc *p = sw_proc_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!guard(L, "process.unregister", name)) return 2;
    switch (sw_pidtable_unregister(&p->rt->pids, name, p->id)) {
    case SW_NAME_OK: break;
    case SW_NAME_NOT_HELD: return sw_api_fail(L, "name not held by this process");
    default: return sw_api_fail(L, "no process registered under that name");
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg process_fns[] = {{"pid", p_pid},
                                       {"spawn", p_spawn},
                                       {"spawn_monitored", p_spawn_monitored},
                                       {"spawn_linked", p_spawn_linked},
                                       {"spawn_linked_monitored", p_spawn_linked_monitored},
                                       {"send", p_send},
                                       {"inbox", p_inbox},
                                       {"events", p_events},
                                       {"cancel", p_cancel},
                                       {"terminate", p_terminate},
                                       {"monitor", p_monitor},
                                       {"unmonitor", p_unmonitor},
                                       {"link", p_link},
                                       {"unlink", p_unlink},
                                       {"set_options", p_set_options},
                                       {"ready", p_ready},
                                       {"with_context", sw_api_with_context},
                                       {NULL, NULL}};

static void push_registry_table(lua_State *L)
{
    static const luaL_Reg names[] = {
        {"register", r_register}, {"lookup", r_lookup}, {"unregister", r_unregister}, {NULL, NULL}};
    lua_createtable(L, 0, 3);
    luaL_register(L, NULL, names);
    sw_api_readonly(L);
}

static void push_event_table(lua_State *L)
{
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, SW_EVENT_CANCEL);
    lua_setfield(L, -2, "CANCEL");
    lua_pushliteral(L, SW_EVENT_EXIT);
    lua_setfield(L, -2, "EXIT");
    lua_pushliteral(L, SW_EVENT_LINK_DOWN);
    lua_setfield(L, -2, "LINK_DOWN");
    sw_api_readonly(L);
}

/* __index of the module table: makes the field read, stores it, and returns it (later reads
 * are plain table hits). Unknown names are nil. */
static int process_index(lua_State *L)
{
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    if (!k) return 0;
    const luaL_Reg *f = process_fns;
    while (f->name && strcmp(f->name, k) != 0) f++;
    if (f->name) lua_pushcfunction(L, f->func);
    else if (strcmp(k, "registry") == 0) push_registry_table(L);
    else if (strcmp(k, "event") == 0) push_event_table(L);
    else return 0;
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
}

/* The module's fields are made on first read: most processes use a few of its eighteen (an
 * idle one only inbox), and making them all was half of what a new process's first run cost.
 * The read-only proxy around it (api.c) reads this table, whose metatable does the rest. */
int sw_open_process(lua_State *L)
{
    lua_createtable(L, 0, 4);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, process_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    return 1;
}
