/* The `exec` module: commands (docs/lua-api.md "exec"). exec.run{cmd = {...}, ...} runs one to
 * its end and returns its exit and output; exec.spawn{...} returns a handle to talk to it.
 * Argument vectors only, never a shell. Turned off unless the host config says exec.allow:
 * true; then guarded as exec.run on the program's absolute path (after the PATH lookup),
 * before anything starts. Blocking calls follow the five steps (check; arm the command's wait;
 * register the cleanup; yield; resume at an EXEC delivery) on runtime/exec.h. */
#include <inttypes.h>
#include <lauxlib.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "exec.h"
#include "proc.h"
#include "task.h"

#define MAX_ARGS     4096 /* argv entries */
#define MAX_ENV      1024 /* env entries besides PATH */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

typedef struct exec_obj {
    sw_child *c; /* NULL once let go */
} exec_obj;

static const char handle_key = 0;

static int fail_err(lua_State *L, int err)
{
    if (err == SW_EXEC_ELIMIT)
        return sw_api_failf(L, "too many commands (at most %d per process)", SW_EXEC_MAX_CHILDREN);
    if (err == SW_EXEC_ETHREAD)
        return sw_api_fail(L, "exec: not on the worker running the process");
    if (err == UV_EPIPE) return sw_api_fail(L, "stdin closed");
    return sw_api_fail(L, uv_strerror(err));
}

/* ---- the command table ---- */

typedef struct command {
    char file[PATH_MAX];
    char cwd[PATH_MAX];
    const char *cwd_name; /* as given: "app:data:sub" */
    bool has_cwd;
    char **argv, **env; /* in userdata on the Lua stack: nothing to free on a raise */
    int64_t timeout_ns;
    const char *stdin_data;
    size_t stdin_len;
    bool has_stdin;
} command;

static const char *host_path(void)
{
    const char *p = getenv("PATH");
    return p && *p ? p : DEFAULT_PATH;
}

/* A bare name is looked up in the host's PATH (absolute entries only); a name with a "/" must
 * be absolute. The file found is what runs: no second lookup in the child. */
static bool find_program(const char *name, char *out, size_t len)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (name[0] != '/' || strlen(name) >= len) return false;
        strcpy(out, name);
        return stat(out, &st) == 0 && S_ISREG(st.st_mode);
    }
    for (const char *dir = host_path(); *dir;) {
        const char *end = strchr(dir, ':');
        size_t n = end ? (size_t)(end - dir) : strlen(dir);
        if (n && dir[0] == '/' && n + strlen(name) + 2 <= len) {
            memcpy(out, dir, n);
            out[n] = '/';
            strcpy(out + n + 1, name);
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return true;
        }
        dir += n + (end ? 1 : 0);
    }
    return false;
}

static char **new_vector(lua_State *L, size_t n)
{
    char **v = lua_newuserdata(L, (n + 1) * sizeof *v);
    v[n] = NULL;
    return v;
}

/* cmd: a non-empty list of strings, anchored by the spec table at 1 while the call runs. */
static void read_argv(lua_State *L, command *c)
{
    lua_getfield(L, 1, "cmd");
    if (!lua_istable(L, -1))
        luaL_error(L, "exec: cmd: expected a list of strings {\"prog\", \"arg\", ...}");
    size_t n = lua_objlen(L, -1);
    if (n == 0 || n > MAX_ARGS) luaL_error(L, "exec: cmd: expected 1 to %d strings", MAX_ARGS);
    c->argv = new_vector(L, n);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -2, (int)i + 1);
        size_t len;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (!s || strlen(s) != len)
            luaL_error(L, "exec: cmd[%d]: expected a string without NUL bytes", (int)i + 1);
        c->argv[i] = (char *)s;
        lua_pop(L, 1);
    }
}

/* env: {NAME = "value"}; the child gets PATH (the host's) and these, nothing else. The
 * "NAME=value" strings are anchored in a table left on the stack. */
static void read_env(lua_State *L, command *c)
{
    lua_getfield(L, 1, "env");
    if (!lua_isnil(L, -1) && !lua_istable(L, -1))
        luaL_error(L, "exec: env: expected a table {NAME = \"value\"}");
    lua_newtable(L); /* the anchor */
    int anchor = lua_gettop(L), n = 0;
    bool path_given = false;
    if (lua_istable(L, -2)) {
        lua_pushnil(L);
        while (lua_next(L, anchor - 1)) {
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
            size_t vlen;
            const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &vlen) : NULL;
            if (!k || !*k || strchr(k, '=') || !v || strlen(v) != vlen)
                luaL_error(L, "exec: env: expected string names (no \"=\") and string values");
            if (++n > MAX_ENV) luaL_error(L, "exec: env: at most %d variables", MAX_ENV);
            path_given |= strcmp(k, "PATH") == 0;
            lua_pushfstring(L, "%s=%s", k, v);
            lua_rawseti(L, anchor, n);
            lua_pop(L, 1);
        }
    }
    if (!path_given) {
        lua_pushfstring(L, "PATH=%s", host_path());
        lua_rawseti(L, anchor, ++n);
    }
    c->env = new_vector(L, (size_t)n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, anchor, i + 1);
        c->env[i] = (char *)lua_tostring(L, -1);
        lua_pop(L, 1);
    }
}

/* The command table at 1: 0, or the count of (nil, err) pushed. Raises on a malformed one. */
static int read_command(lua_State *L, command *c, bool run)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(c, 0, sizeof *c);
    c->timeout_ns = -1;
    read_argv(L, c);
    read_env(L, c);
    lua_getfield(L, 1, "timeout");
    if (!lua_isnil(L, -1) && (c->timeout_ns = sw_api_to_duration(L, -1)) < 0)
        luaL_error(L,
                   "exec: timeout: expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)");
    lua_getfield(L, 1, "stdin");
    if (!lua_isnil(L, -1)) {
        if (!run) luaL_error(L, "exec.spawn: stdin: write it with handle:write()");
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "exec: stdin: expected a string");
        c->stdin_data = lua_tolstring(L, -1, &c->stdin_len);
        c->has_stdin = true;
    }
    lua_getfield(L, 1, "cwd");
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "exec: cwd: expected a volume path");
        int n = sw_api_fs_local_path(L, lua_gettop(L), c->cwd, sizeof c->cwd);
        if (n) return n;
        c->has_cwd = true;
        c->cwd_name = lua_tostring(L, -1);
    }
    if (!find_program(c->argv[0], c->file, sizeof c->file))
        return sw_api_failf(L, "program not found: %s", c->argv[0]);
    return 0;
}

/* Steps one and two: allowed, well-formed, guarded, in a task; then started. NULL with the
 * count of (nil, err) in *n. */
static sw_child *start(lua_State *L, bool run, int *n)
{
    sw_proc *p = sw_proc_of(L);
    command c;
    *n = 0;
    if (!p->rt->exec_allow) {
        *n = sw_api_fail(L, "exec is disabled on this host (host config exec.allow)");
        return NULL;
    }
    if ((*n = read_command(L, &c, run))) return NULL;
    const sw_proc_ctx *ctx = sw_proc_ctx_of(L);
    if (ctx->allowed && !ctx->allowed(L, "exec.run", c.file)) {
        *n = sw_push_denied(L, "exec.run", c.file);
        return NULL;
    }
    sw_task *t = sw_task_current(L);
    if (run && (!t || !lua_isyieldable(L))) sw_task_block(L, NULL); /* raises: cannot wait */
    sw_exec_opts o = {.file = c.file,
                      .argv = c.argv,
                      .env = c.env,
                      .cwd = c.has_cwd ? c.cwd : NULL,
                      .max_output = run ? (size_t)p->rt->limits.exec_output : 0,
                      .timeout_ns = c.timeout_ns,
                      .no_stdin = run && !c.has_stdin,
                      .budget = &p->rt->memory};
    int err;
    sw_child *ch = sw_exec_start(p, &o, &err);
    if (!ch) {
        if (err == UV_ENOENT || err == UV_EACCES || err == UV_ENOTDIR) /* the program or cwd */
            *n = c.has_cwd ? sw_api_failf(L, "cannot start %s in %s: %s", c.file, c.cwd_name,
                                          uv_strerror(err))
                           : sw_api_failf(L, "cannot start %s: %s", c.file, uv_strerror(err));
        else *n = fail_err(L, err);
        return NULL;
    }
    if (c.has_stdin) {
        sw_exec_write(ch, c.stdin_data, c.stdin_len); /* a failure shows as EPIPE in the child */
        sw_exec_close_stdin(ch);
    }
    return ch;
}

/* ---- exec.run ---- */

static void push_exit(lua_State *L, sw_child *c)
{
    int64_t code;
    int sig;
    sw_exec_exited(c, &code, &sig);
    lua_createtable(L, 0, 4);
    if (!sig) {
        lua_pushnumber(L, (lua_Number)code);
        lua_setfield(L, -2, "code");
    } else {
        lua_pushinteger(L, sig);
        lua_setfield(L, -2, "signal");
    }
}

static void push_stream(lua_State *L, sw_child *c, sw_exec_stream s, const char *field)
{
    size_t len;
    const char *b = sw_exec_peek(c, s, &len);
    lua_pushlstring(L, b, len);
    lua_setfield(L, -2, field);
}

static int step_run(sw_exec_wait *w, lua_State *L)
{
    sw_child *c = w->child;
    int64_t code;
    int sig;
    if (!sw_exec_exited(c, &code, &sig) || !sw_exec_stream_end(c, SW_EXEC_STDOUT) ||
        !sw_exec_stream_end(c, SW_EXEC_STDERR))
        return -1;
    int n;
    if (sw_exec_timed_out(c)) {
        n = sw_api_fail(L, "timeout");
    } else if (sw_exec_out_of_memory(c)) {
        n = sw_api_fail(L, "host memory limit reached");
    } else if (sw_exec_overflowed(c)) {
        char msg[80];
        snprintf(msg, sizeof msg, "output too large (at most %" PRIu64 " bytes of each stream)",
                 sw_proc_of(L)->rt->limits.exec_output);
        n = sw_api_fail(L, msg);
    } else {
        push_exit(L, c);
        push_stream(L, c, SW_EXEC_STDOUT, "stdout");
        push_stream(L, c, SW_EXEC_STDERR, "stderr");
        n = 1;
    }
    sw_exec_release(c); /* done: it is gone (exited, its group killed) */
    return n;
}

/* The task running exec.run went away (its process ended): the command goes too. */
static void run_cancel(sw_task_wait *base) { sw_exec_release(((sw_exec_wait *)base)->child); }

static int e_run(lua_State *L)
{
    int n;
    sw_child *c = start(L, true, &n);
    if (!c) return n;
    sw_exec_wait *w = sw_exec_waiter(c, SW_EXEC_W_EXIT);
    sw_exec_arm(w, sw_task_current(L), step_run);
    w->base.cancel = run_cancel;
    return sw_task_block(L, &w->base);
}

/* ---- exec.spawn and its handle ---- */

static sw_child *check_handle(lua_State *L)
{
    exec_obj *o = sw_api_checkudata(L, 1, &handle_key, "exec.handle");
    return o->c && sw_exec_owner(o->c) == sw_proc_of(L) ? o->c : NULL;
}

/* Waits on the side with step unless it completes now. */
static int wait_on(lua_State *L, sw_child *c, sw_exec_side side, sw_exec_step step)
{
    sw_exec_wait *w = sw_exec_waiter(c, side);
    if (w->task) return sw_api_fail(L, "busy: another task waits on this");
    int k = step(w, L);
    if (k >= 0) return k;
    sw_task *t = sw_task_current(L);
    if (!t || !lua_isyieldable(L)) return sw_task_block(L, NULL); /* raises */
    sw_exec_arm(w, t, step);
    return sw_task_block(L, &w->base);
}

static int step_read(sw_exec_wait *w, lua_State *L, sw_exec_stream s)
{
    size_t len;
    const char *b = sw_exec_peek(w->child, s, &len);
    if (len) {
        lua_pushlstring(L, b, len);
        sw_exec_consume(w->child, s, len);
        return 1;
    }
    int end = sw_exec_stream_end(w->child, s);
    if (!end) return -1;
    return sw_api_fail(L, end == UV_EOF ? "eof" : uv_strerror(end));
}

static int step_stdout(sw_exec_wait *w, lua_State *L) { return step_read(w, L, SW_EXEC_STDOUT); }
static int step_stderr(sw_exec_wait *w, lua_State *L) { return step_read(w, L, SW_EXEC_STDERR); }

static int h_read_stdout(lua_State *L)
{
    sw_child *c = check_handle(L);
    return c ? wait_on(L, c, SW_EXEC_W_OUT, step_stdout) : sw_api_fail(L, "closed");
}

static int h_read_stderr(lua_State *L)
{
    sw_child *c = check_handle(L);
    return c ? wait_on(L, c, SW_EXEC_W_ERR, step_stderr) : sw_api_fail(L, "closed");
}

static int step_drain(sw_exec_wait *w, lua_State *L)
{
    int d = sw_exec_drained(w->child);
    if (d < 0) return fail_err(L, d);
    if (!d) return -1;
    lua_pushboolean(L, 1);
    return 1;
}

static int h_write(lua_State *L)
{
    sw_child *c = check_handle(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    if (!c) return sw_api_fail(L, "closed");
    if (sw_exec_waiter(c, SW_EXEC_W_IN)->task)
        return sw_api_fail(L, "busy: another task waits on this");
    int rc = sw_exec_write(c, data, len);
    if (rc < 0) return fail_err(L, rc);
    if (rc == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return wait_on(L, c, SW_EXEC_W_IN, step_drain); /* queued past the bound: wait for room */
}

static int h_close_stdin(lua_State *L)
{
    sw_child *c = check_handle(L);
    if (c) sw_exec_close_stdin(c);
    lua_pushboolean(L, 1);
    return 1;
}

static int step_wait(sw_exec_wait *w, lua_State *L)
{
    int64_t code;
    int sig;
    if (!sw_exec_exited(w->child, &code, &sig)) return -1;
    if (sw_exec_timed_out(w->child)) return sw_api_fail(L, "timeout");
    push_exit(L, w->child);
    return 1;
}

static int h_wait(lua_State *L)
{
    sw_child *c = check_handle(L);
    return c ? wait_on(L, c, SW_EXEC_W_EXIT, step_wait) : sw_api_fail(L, "closed");
}

static int check_signal(lua_State *L, int idx)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT},
                {"HUP", SIGHUP},   {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
                {"USR2", SIGUSR2}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}};
    if (lua_isnoneornil(L, idx)) return SIGTERM;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        int sig = (int)lua_tointeger(L, idx);
        if (sig >= 1 && sig <= 64) return sig;
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        if (strncmp(s, "SIG", 3) == 0) s += 3;
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            if (strcmp(sigs[i].name, s) == 0) return sigs[i].sig;
    }
    return luaL_argerror(
        L, idx, "expected a signal: \"TERM\", \"KILL\", \"INT\", \"HUP\", ... or a number");
}

static int h_kill(lua_State *L)
{
    sw_child *c = check_handle(L);
    int sig = check_signal(L, 2);
    if (!c) return sw_api_fail(L, "closed");
    int rc = sw_exec_kill(c, sig);
    if (rc < 0) return sw_api_fail(L, rc == UV_ESRCH ? "exited" : uv_strerror(rc));
    lua_pushboolean(L, 1);
    return 1;
}

static int h_pid(lua_State *L)
{
    sw_child *c = check_handle(L);
    if (!c) return sw_api_fail(L, "closed");
    lua_pushinteger(L, sw_exec_pid(c));
    return 1;
}

static int h_close(lua_State *L)
{
    sw_child *c = check_handle(L);
    for (int side = 0; c && side < 4; side++) { /* tasks waiting on it get nil, "closed" */
        sw_exec_wait *w = sw_exec_waiter(c, (sw_exec_side)side);
        sw_task *t = w->task;
        if (!t) continue;
        w->task = NULL;
        lua_pushnil(L);
        lua_pushliteral(L, "closed");
        sw_task_wake(t, L, 2);
    }
    if (c) sw_exec_release(c); /* a command still running is killed */
    lua_pushboolean(L, 1);
    return 1;
}

static int handle_gc(lua_State *L)
{
    exec_obj *o = lua_touserdata(L, 1);
    if (o->c) sw_exec_release(o->c); /* unreachable: a command still running is killed */
    return 0;
}

static int handle_tostring(lua_State *L)
{
    exec_obj *o = lua_touserdata(L, 1);
    lua_pushfstring(L, "exec.handle: %d", o->c ? sw_exec_pid(o->c) : 0);
    return 1;
}

static void init_handle(lua_State *L)
{
    static const luaL_Reg methods[] = {{"write", h_write},
                                       {"close_stdin", h_close_stdin},
                                       {"read_stdout", h_read_stdout},
                                       {"read_stderr", h_read_stderr},
                                       {"wait", h_wait},
                                       {"kill", h_kill},
                                       {"pid", h_pid},
                                       {"close", h_close},
                                       {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, handle_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, handle_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "exec.handle");
    lua_setfield(L, -2, "__metatable");
}

static int e_spawn(lua_State *L)
{
    int n;
    sw_child *c = start(L, false, &n);
    if (!c) return n;
    exec_obj *o = lua_newuserdata(L, sizeof *o); /* a raise leaves c to its process's end */
    o->c = NULL;
    sw_api_push_metatable(L, &handle_key, init_handle);
    lua_setmetatable(L, -2);
    sw_exec_bind(c, &o->c);
    return 1;
}

int sw_open_exec(lua_State *L)
{
    static const luaL_Reg fns[] = {{"run", e_run}, {"spawn", e_spawn}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
