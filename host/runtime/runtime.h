/* The runtime: worker pools (one per process.host, plus the default host), the pid table, the
 * registry snapshot processes read, and the log. The entry points any thread may use to reach
 * a process: deliver, kill. Created once per `steward run`; tests may create several. */
#ifndef STEWARD_RUNTIME_H
#define STEWARD_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc_limits.h"
#include "mailbox.h"
#include "vm.h"
#include "log.h"
#include "pidtable.h"
#include "registry.h"
#include "security.h"
#include "std_streams.h"
#include "security_audit.h"
#include "security_token.h"
#include "worker.h"

/* The host's check of a guarded call (see sw_proc_ctx.allowed). */
typedef bool (*sw_guard_fn)(lua_State *L, const char *action, const char *resource);

/* What a process of a service asks of the service's supervisor (the `service` module,
 * docs/lua-api.md): the runtime only carries the hook from the composition root to the Lua
 * modules, which cannot include the supervisor. */
typedef enum {
    SW_SVC_REQ_READY,        /* the service is ready (from a process of its tree) */
    SW_SVC_REQ_SET_POLICY,   /* `policy` judges the end of the current run */
    SW_SVC_REQ_CLEAR_POLICY, /* the registry's lifecycle.restart judges it again */
    SW_SVC_REQ_RESET_BACKOFF /* the next end counts as the first */
} sw_svc_req_kind;

typedef struct sw_svc_request {
    sw_svc_req_kind kind;
    const char *service; /* the service id (borrowed for the call) */
    sw_restart policy;   /* SET_POLICY */
} sw_svc_request;

/* Hands rq to the supervisor, which applies it on its own thread after everything the calling
 * process sent before. 0, or -1 when out of memory. Thread: any. */
typedef int (*sw_svc_request_fn)(void *arg, const sw_svc_request *rq);

typedef struct sw_host_pool {
    const char *id; /* process.host id */
    sw_workers workers;
} sw_host_pool;

/* Bytecode of each process.lua / library.lua entry, compiled on first use. */
typedef struct sw_code {
    char *key; /* chunk name, NUL, source text: compared by content, so a
                                    reload reuses unchanged code and never mistakes a new
                                    entry at a freed entry's address for the old one */
    size_t key_len;
    uint64_t hash;
    unsigned char *bc;
    size_t len;
} sw_code;

typedef struct sw_runtime {
    const sw_registry *registry; /* the current snapshot (a reference); see sw_runtime_registry */
    pthread_mutex_t registry_lock;
    sw_pidtable pids;
    sw_workers workers; /* the default host */
    sw_host_pool *hosts;
    size_t n_hosts;
    /* Where `jit: true` processes without a process.host run (docs/lua-api.md "Preemption and
     * the JIT"): their own workers, so a long compiled trace never stalls interpreted
     * processes. Started when the first snapshot has a jit entry (as process.host pools). */
    sw_workers jit_workers;
    bool has_jit_workers;
    sw_log *log;
    size_t max_message; /* bytes; a larger send is an error */
    pthread_mutex_t code_lock;
    sw_code *code; /* open addressing by content hash */
    size_t code_cap, code_n;
    /* The policy set checks use now. Read with an atomic load to compare with a process's
     * cached set; taking a reference to it needs security_lock (see sw_runtime_security). */
    _Atomic(sw_security_set *) security;
    pthread_mutex_t security_lock;
    bool security_relaxed; /* security.strict_mode: false */
    bool exec_allow;       /* host config exec.allow: the exec module may start commands */
    const sw_vm_lib *libs; /* the Lua modules every process gets (sw_runtime_config) */
    sw_guard_fn guard;
    sw_svc_request_fn service_request; /* sw_runtime_config; NULL: no supervisor */
    void *service_request_arg;
    lua_CFunction test_main;        /* sw_runtime_config */
    lua_CFunction http_server_main; /* sw_runtime_config's */
    sw_limits limits;               /* resolved: every field set */
    sw_vm_budget memory;            /* the cap on every process's heap and queued deliveries */
    atomic_llong procs;             /* processes holding a state (prepared or running) */
    sw_svc_counts services;         /* processes spawned by each service's processes */
    sw_std_streams std;             /* stdout and stderr as the io module writes them */
    /* The guard's decision without an audit event (sw_proc_ctx.visible). */
    sw_guard_fn visible;
    /* The stores of security.token_store entries, made on first use (NULL: out of memory). */
    sw_token_stores *tokens;
    /* The audit log's limiter (docs/security.md "Audit"); NULL: nothing is held back. */
    sw_audit *audit;
} sw_runtime;

typedef struct sw_runtime_config {
    int workers;           /* default host; 0 = number of cores */
    size_t max_message;    /* 0 = 64MB */
    uint64_t slice_ns;     /* 0 = SW_SLICE_NS */
    bool security_relaxed; /* host config security.strict_mode: false */
    bool exec_allow;       /* host config exec.allow (false) */
    /* Handed down by the composition root (the runtime includes no binding): the lazily
     * opened Lua modules of every process (sw_vm_set_libs; static, outliving the runtime),
     * and the guard its host calls use. NULL: none (bare Lua, nothing guarded). */
    const sw_vm_lib *libs;
    sw_guard_fn guard;
    /* The supervisor's door for the `service` module, also handed down by the composition
     * root; NULL: no supervisor (`run -x`, tests). */
    sw_svc_request_fn service_request;
    void *service_request_arg;
    /* `steward test`: called with a test.lua's chunk, returns the function its main task
     * runs first (the test runner around the chunk); NULL: test.lua entries run as plain
     * chunks. */
    lua_CFunction test_main;
    /* The guard without its audit event; NULL: guard. */
    sw_guard_fn visible;
    sw_limits limits; /* zero fields: the defaults (proc_limits.h) */
    /* The main_hook of an http.service's process (lua_api; see sw_runtime_http_service). */
    lua_CFunction http_server_main;
} sw_runtime_config;

/* Starts the worker threads of the default host and of every process.host in the registry.
 * The registry and log must outlive the runtime. NULL on failure. */
sw_runtime *sw_runtime_new(const sw_registry *reg, sw_log *log, const sw_runtime_config *cfg);
/* Stops every worker (processes still alive are not run again) and frees everything. */
void sw_runtime_free(sw_runtime *rt);

/* The current snapshot, retained for the caller (release with sw_registry_free); new
 * processes that name no snapshot of their own get it. Thread-safe. */
const sw_registry *sw_runtime_registry(sw_runtime *rt);
/* Makes reg the current snapshot (reload). Processes keep the snapshot they started with. The
 * process.host pools stay those of the first snapshot. */
void sw_runtime_set_registry(sw_runtime *rt, const sw_registry *reg);

/* The pool of a process.host id; NULL for the default host or an unknown id. */
sw_workers *sw_runtime_pool(sw_runtime *rt, const char *host_id);

/* The compiled chunk of a process.lua or library.lua entry, compiled once per distinct
 * content and shared by every process (the bytes are immutable until the runtime is freed). NULL with err on a compile
 * error. Thread-safe. */
const unsigned char *sw_runtime_code(sw_runtime *rt, const sw_entry *e, size_t *len, char *err,
                                     size_t errlen);
/* The same for any text under chunkname (the files of a library's module tree). */
const unsigned char *sw_runtime_code_text(sw_runtime *rt, const char *chunkname, const char *text,
                                          size_t text_len, size_t *len, char *err, size_t errlen);
/* Compiles every Lua source of reg as sw_runtime_code would and adds a load error to diags for
 * each that does not compile (a library's tree: every file) (file:line:col of the entry, field "source", Lua's message with
 * its own position). The number of errors added (`steward check`). */
size_t sw_check_sources(const sw_registry *reg, sw_diags *diags);

/* Publishes a new policy set (compiled from a new snapshot on reload), taking over the
 * caller's reference; the previous set is released (freed when the last process drops it).
 * Every check after this returns uses the new set; none mixes the two. Thread: any. */
void sw_runtime_set_security(sw_runtime *rt, sw_security_set *set);
/* A new reference to the current policy set. Thread: any. */
sw_security_set *sw_runtime_security(sw_runtime *rt);

typedef struct sw_spawn sw_spawn;
/* Makes sp, a service's spawn, that of an http.service: its process runs the host's HTTP
 * server (lua/http_server.lua with the runtime's http_server_main; docs/registry.md). */
void sw_runtime_http_service(sw_runtime *rt, sw_spawn *sp);

/* Kills a process (process.terminate, stop timeouts, shutdown). 0, or -1 if it is not alive. */
int sw_runtime_kill(sw_runtime *rt, uint64_t pid);

/* ---- a service's process tree (its sw_svc_count; the root, its own process, not counted) ---- */

/* Opens c's tree for a new run: its processes may spawn again; the run's usage (CPU time,
 * peaks, the memory limit's refusal) starts afresh. Only while no tree process lives (a new
 * run, before its root launches). Thread: the owner's. */
void sw_tree_open(sw_svc_count *c);
/* The run's root ended: the tree takes no more processes. true when it is already gone
 * (nothing will be called); else on_gone(arg) is called once, on any thread, when it is: the
 * owner then confirms with sw_tree_gone. Thread: the owner's. */
bool sw_tree_end(sw_svc_count *c, sw_tree_gone_fn on_gone, void *arg);
/* Kills the run's own process (the root) of c, if it lives: a process of its tree went past
 * the service's memory limit (docs/supervision.md "Resources"). Thread: any. */
void sw_tree_kill_root(sw_runtime *rt, sw_svc_count *c);
/* CANCEL to each process left in an ending tree (after the owner has logged why). */
void sw_runtime_cancel_tree(sw_runtime *rt, sw_svc_count *c);
/* Kills every process left in c's tree (after an ending tree's stop timeout). */
void sw_runtime_kill_tree(sw_runtime *rt, sw_svc_count *c);
/* After on_gone: true when the tree is really gone; false (a stale call) re-arms on_gone. */
bool sw_tree_gone(sw_svc_count *c);

#endif
