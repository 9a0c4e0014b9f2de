/* The runtime: worker pools and the paths into a process from any thread. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "vm.h"

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static size_t code_slot(const sw_code *tab, size_t cap, uint64_t hash, const char *key,
                        size_t key_len)
{
    size_t i = hash >> 20 & (cap - 1);
    while (tab[i].key && !(tab[i].hash == hash && tab[i].key_len == key_len &&
                           memcmp(tab[i].key, key, key_len) == 0))
        i = (i + 1) & (cap - 1);
    return i;
}

static void code_grow(sw_runtime *rt)
{
    size_t cap = rt->code_cap ? rt->code_cap * 2 : 64;
    sw_code *tab = calloc(cap, sizeof *tab);
    if (!tab) abort();
    for (size_t i = 0; i < rt->code_cap; i++) {
        const sw_code *c = &rt->code[i];
        if (c->key) tab[code_slot(tab, cap, c->hash, c->key, c->key_len)] = *c;
    }
    free(rt->code);
    rt->code = tab;
    rt->code_cap = cap;
}

/* "chunkname\0source": what the bytecode is a function of. */
static char *code_key(const char *chunkname, const char *text, size_t len, size_t *key_len)
{
    size_t n = strlen(chunkname) + 1;
    char *key = malloc(n + len);
    if (!key) return NULL;
    memcpy(key, chunkname, n);
    if (len) memcpy(key + n, text, len);
    *key_len = n + len;
    return key;
}

const unsigned char *sw_runtime_code(sw_runtime *rt, const sw_entry *e, size_t *len, char *err,
                                     size_t errlen)
{
    const sw_source *src = sw_entry_source(e);
    char chunkname[512];
    sw_entry_chunkname(e, chunkname, sizeof chunkname);
    return sw_runtime_code_text(rt, chunkname, src->text, src->len, len, err, errlen);
}

const unsigned char *sw_runtime_code_text(sw_runtime *rt, const char *chunkname, const char *text,
                                          size_t text_len, size_t *len, char *err, size_t errlen)
{
    size_t key_len;
    char *key = code_key(chunkname, text, text_len, &key_len);
    if (!key) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    uint64_t hash = fnv1a(0xcbf29ce484222325ull, key, key_len);
    pthread_mutex_lock(&rt->code_lock);
    if ((rt->code_n + 1) * 2 > rt->code_cap) code_grow(rt);
    sw_code *c = &rt->code[code_slot(rt->code, rt->code_cap, hash, key, key_len)];
    if (!c->key) {
        /* Compiled under the lock: each content once, and other spawns of it wait rather than
         * compile it again. */
        size_t name_len = strlen(key);
        if (sw_vm_compile(key, key + name_len + 1, key_len - name_len - 1, &c->bc, &c->len, err,
                          errlen) != 0) {
            pthread_mutex_unlock(&rt->code_lock);
            free(key);
            return NULL;
        }
        *c = (sw_code){key, key_len, hash, c->bc, c->len};
        key = NULL;
        rt->code_n++;
    }
    const unsigned char *bc = c->bc;
    *len = c->len;
    pthread_mutex_unlock(&rt->code_lock);
    free(key);
    return bc;
}

static void check_text(const sw_entry *e, const char *chunkname, const char *text, size_t len,
                       sw_diags *diags)
{
    char err[512];
    unsigned char *bc = NULL;
    size_t bc_len = 0;
    if (sw_vm_compile(chunkname, text, len, &bc, &bc_len, err, sizeof err) != 0)
        sw_diags_add(diags, e->file, e->line, e->col, e->id, "source", "%s", err);
    free(bc);
}

size_t sw_check_sources(const sw_registry *reg, sw_diags *diags)
{
    size_t before = diags->n;
    for (size_t i = 0; i < reg->n_entries; i++) {
        const sw_entry *e = reg->entries[i];
        const sw_source *src = sw_entry_source(e);
        if (!src) continue;
        char chunkname[512];
        sw_entry_chunkname(e, chunkname, sizeof chunkname);
        if (src->text) check_text(e, chunkname, src->text, src->len, diags);
        for (size_t k = 0; src->tree && k < src->tree->n; k++) {
            const sw_tree_file *f = &src->tree->files[k];
            snprintf(chunkname, sizeof chunkname, "@%s", f->path);
            check_text(e, chunkname, f->text, f->len, diags);
        }
    }
    return diags->n - before;
}

const sw_registry *sw_runtime_registry(sw_runtime *rt)
{
    pthread_mutex_lock(&rt->registry_lock);
    const sw_registry *r = sw_registry_retain(rt->registry);
    pthread_mutex_unlock(&rt->registry_lock);
    return r;
}

void sw_runtime_set_registry(sw_runtime *rt, const sw_registry *reg)
{
    sw_registry_retain(reg);
    pthread_mutex_lock(&rt->registry_lock);
    const sw_registry *old = rt->registry;
    rt->registry = reg;
    pthread_mutex_unlock(&rt->registry_lock);
    sw_registry_free(old);
}

/* Whether any process.lua or function.lua of reg runs with the JIT on. */
static bool has_jit_entry(const sw_registry *reg)
{
    for (size_t i = 0; i < reg->n_entries; i++) {
        const sw_entry *e = reg->entries[i];
        if ((e->kind == SW_KIND_PROCESS_LUA || e->kind == SW_KIND_FUNCTION_LUA) &&
            e->as.process_lua.jit)
            return true;
    }
    return false;
}

sw_runtime *sw_runtime_new(const sw_registry *reg, sw_log *log, const sw_runtime_config *cfg)
{
    sw_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return NULL;
    rt->registry = sw_registry_retain(reg);
    pthread_mutex_init(&rt->registry_lock, NULL);
    rt->log = log;
    rt->max_message = cfg && cfg->max_message ? cfg->max_message : (size_t)64 << 20;
    sw_pidtable_init(&rt->pids);
    pthread_mutex_init(&rt->code_lock, NULL);
    rt->security_relaxed = cfg && cfg->security_relaxed;
    rt->exec_allow = cfg && cfg->exec_allow;
    rt->libs = cfg ? cfg->libs : NULL;
    rt->guard = cfg ? cfg->guard : NULL;
    rt->http_server_main = cfg ? cfg->http_server_main : NULL;
    rt->service_request = cfg ? cfg->service_request : NULL;
    rt->service_request_arg = cfg ? cfg->service_request_arg : NULL;
    rt->test_main = cfg ? cfg->test_main : NULL;
    rt->visible = cfg ? cfg->visible : NULL;
    if (cfg) rt->limits = cfg->limits;
    sw_limits_resolve(&rt->limits);
    atomic_init(&rt->memory.used, 0);
    atomic_init(&rt->memory.cap, (size_t)rt->limits.memory);
    atomic_init(&rt->memory.peak, 0);
    atomic_init(&rt->memory.refused, false);
    atomic_init(&rt->procs, 0);
    sw_svc_counts_init(&rt->services, &rt->memory);
    sw_std_streams_init(&rt->std);
    pthread_mutex_init(&rt->security_lock, NULL);
    char err[256];
    sw_security_set *set = sw_security_compile(reg, err, sizeof err);
    if (!set) {
        sw_svc_counts_free(&rt->services);
        pthread_mutex_destroy(&rt->security_lock);
        pthread_mutex_destroy(&rt->code_lock);
        sw_pidtable_destroy(&rt->pids);
        free(rt);
        return NULL;
    }
    atomic_init(&rt->security, set);
    int workers = cfg && cfg->workers > 0 ? cfg->workers : cores();
    uint64_t slice = cfg && cfg->slice_ns ? cfg->slice_ns : SW_SLICE_NS;
    if (sw_workers_start(&rt->workers, workers, slice) != 0) {
        sw_svc_counts_free(&rt->services);
        sw_security_release(set);
        pthread_mutex_destroy(&rt->security_lock);
        sw_pidtable_destroy(&rt->pids);
        sw_registry_free(rt->registry);
        free(rt);
        return NULL;
    }
    for (size_t i = 0; i < reg->n_entries; i++)
        rt->n_hosts += reg->entries[i]->kind == SW_KIND_PROCESS_HOST;
    rt->hosts = calloc(rt->n_hosts ? rt->n_hosts : 1, sizeof *rt->hosts);
    size_t h = 0;
    for (size_t i = 0; i < reg->n_entries && rt->hosts; i++) {
        const sw_entry *e = reg->entries[i];
        if (e->kind != SW_KIND_PROCESS_HOST) continue;
        rt->hosts[h].id = e->id;
        sw_workers_start(&rt->hosts[h].workers,
                         e->as.host.workers > 0 ? (int)e->as.host.workers : cores(), slice);
        h++;
    }
    if (has_jit_entry(reg))
        rt->has_jit_workers = sw_workers_start(&rt->jit_workers, workers, slice) == 0;
    rt->tokens = sw_token_stores_new(); /* NULL (no memory): token stores fail, nothing else */
    rt->audit = sw_audit_new();         /* NULL: audit events are not held back */
    return rt;
}

void sw_runtime_free(sw_runtime *rt)
{
    if (!rt) return;
    for (size_t i = 0; i < rt->n_hosts; i++) sw_workers_stop(&rt->hosts[i].workers);
    if (rt->has_jit_workers) sw_workers_stop(&rt->jit_workers);
    sw_workers_stop(&rt->workers);
    /* No thread runs processes any more: free the ones still alive. */
    for (size_t i = 0; i < rt->pids.cap; i++) {
        sw_proc *p = rt->pids.slots[i].proc;
        if (!p) continue;
        rt->pids.slots[i].proc = NULL;
        sw_proc_discard(p);
    }
    free(rt->hosts);
    for (size_t i = 0; i < rt->code_cap; i++) {
        free(rt->code[i].bc);
        free(rt->code[i].key);
    }
    free(rt->code);
    sw_registry_free(rt->registry);
    pthread_mutex_destroy(&rt->registry_lock);
    pthread_mutex_destroy(&rt->code_lock);
    sw_token_stores_free(rt->tokens); /* after the processes: none may use a store now */
    sw_audit_free(rt->audit);
    sw_security_release(atomic_load(&rt->security)); /* after the processes: they hold theirs */
    pthread_mutex_destroy(&rt->security_lock);
    sw_pidtable_destroy(&rt->pids);
    sw_svc_counts_free(&rt->services);
    sw_std_streams_free(&rt->std); /* after the processes: their last lines are in */
    free(rt);
}

void sw_runtime_set_security(sw_runtime *rt, sw_security_set *set)
{
    pthread_mutex_lock(&rt->security_lock);
    sw_security_set *old = atomic_exchange(&rt->security, set);
    pthread_mutex_unlock(&rt->security_lock);
    sw_security_release(old);
}

/* Under the lock so the set cannot be released between the load and the retain. */
sw_security_set *sw_runtime_security(sw_runtime *rt)
{
    pthread_mutex_lock(&rt->security_lock);
    sw_security_set *set = sw_security_retain(atomic_load(&rt->security));
    pthread_mutex_unlock(&rt->security_lock);
    return set;
}

sw_workers *sw_runtime_pool(sw_runtime *rt, const char *host_id)
{
    for (size_t i = 0; i < rt->n_hosts; i++)
        if (strcmp(rt->hosts[i].id, host_id) == 0) return &rt->hosts[i].workers;
    return NULL;
}

int sw_runtime_kill(sw_runtime *rt, uint64_t pid)
{
    sw_delivery *d = sw_delivery_new(SW_DLV_KILL, 0, 0, NULL, NULL, 0);
    if (!d) return -1;
    sw_proc *p = sw_pidtable_grab(&rt->pids, pid);
    bool ok = p && sw_proc_deliver(p, d); /* sets the vm's kill flag under the process lock */
    if (p) sw_proc_release(p);
    if (!ok) free(d);
    return ok ? 0 : -1;
}

/* ---- process trees ---- */

static bool in_tree(const sw_proc *p, void *c) { return p->svc == c && p->svc_counted; }

/* Delivers one new delivery of type to every live process of c's tree. */
static void tree_deliver(sw_runtime *rt, sw_svc_count *c, sw_delivery_type type)
{
    size_t max = (size_t)atomic_load(&c->live) + 16; /* the tree takes no more processes */
    sw_proc **ps = malloc(max * sizeof *ps);
    if (!ps) return; /* out of memory: the stop timeout kills them, or shutdown does */
    size_t n = sw_pidtable_grab_matching(&rt->pids, in_tree, c, ps, max);
    for (size_t i = 0; i < n; i++) {
        sw_delivery *d = sw_delivery_new(type, 0, 0, NULL, NULL, 0);
        if (d && !sw_proc_deliver(ps[i], d)) free(d);
        sw_proc_release(ps[i]);
    }
    free(ps);
}

void sw_tree_open(sw_svc_count *c)
{
    atomic_store(&c->ending, false);
    atomic_store(&c->told, false);
    /* a new run's usage (docs/supervision.md "Resources"); what its root holds counts */
    atomic_store(&c->memory.peak, atomic_load(&c->memory.used));
    atomic_store(&c->memory.refused, false);
    atomic_store(&c->live_peak, 0);
    atomic_store(&c->cpu_ns, 0);
    atomic_store(&c->root_doomed, false);
}

/* Whoever takes `told` first while the tree is empty reports it. */
static bool claim_gone(sw_svc_count *c)
{
    return atomic_load(&c->live) == 0 && !atomic_exchange(&c->told, true);
}

bool sw_tree_gone(sw_svc_count *c)
{
    if (atomic_load(&c->live) == 0) return true;
    atomic_store(&c->told, false); /* stale: the next end in the tree tells again */
    return claim_gone(c);
}

bool sw_tree_end(sw_svc_count *c, sw_tree_gone_fn on_gone, void *arg)
{
    if (atomic_load(&c->live) == 0) return true; /* the common case: no processes, no cost */
    c->on_gone = on_gone;
    c->gone_arg = arg;
    atomic_store(&c->told, false);
    atomic_store(&c->ending, true);
    return claim_gone(c);
}

static bool is_root(const sw_proc *p, void *c) { return p->svc == c && !p->svc_counted; }

void sw_tree_kill_root(sw_runtime *rt, sw_svc_count *c)
{
    sw_proc *root = NULL;
    if (sw_pidtable_grab_matching(&rt->pids, is_root, c, &root, 1) != 1) return;
    sw_runtime_kill(rt, root->id);
    sw_proc_release(root);
}

void sw_runtime_cancel_tree(sw_runtime *rt, sw_svc_count *c) { tree_deliver(rt, c, SW_DLV_CANCEL); }

void sw_runtime_kill_tree(sw_runtime *rt, sw_svc_count *c) { tree_deliver(rt, c, SW_DLV_KILL); }
