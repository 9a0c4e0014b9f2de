/* Host limits: defaults, the RAM they are a fraction of, and the per-service process counts
 * (see proc_limits.h). */
#include "proc_limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A number read from a one-line file, or 0 ("max", missing, unreadable). */
static uint64_t read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (!f) return 0;
    if (fscanf(f, "%llu", &v) != 1) v = 0;
    fclose(f);
    return v;
}

uint64_t sw_limits_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : (uint64_t)1 << 32;
    const char *files[] = {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        uint64_t cg = read_number(files[i]);
        if (cg && cg < ram) ram = cg; /* v1 says "no limit" with a huge number: never lower */
    }
    return ram;
}

void sw_limits_resolve(sw_limits *l)
{
    if (l->processes <= 0) l->processes = SW_LIMIT_PROCESSES;
    if (l->service_processes <= 0) l->service_processes = SW_LIMIT_SERVICE_PROCESSES;
    if (!l->memory) {
        double f = l->memory_fraction > 0 && l->memory_fraction <= 1 ? l->memory_fraction
                                                                     : SW_LIMIT_MEMORY_FRACTION;
        l->memory = (uint64_t)((double)sw_limits_ram() * f);
    }
    if (l->mailbox_messages <= 0) l->mailbox_messages = SW_LIMIT_MAILBOX_MESSAGES;
    if (!l->mailbox_bytes) l->mailbox_bytes = SW_LIMIT_MAILBOX_BYTES;
    if (l->monitors <= 0) l->monitors = SW_LIMIT_PER_PROCESS;
    if (l->links <= 0) l->links = SW_LIMIT_PER_PROCESS;
    if (l->names <= 0) l->names = SW_LIMIT_PER_PROCESS;
    if (!l->fs_read) l->fs_read = SW_LIMIT_FS_READ;
    if (!l->exec_output) l->exec_output = SW_LIMIT_EXEC_OUTPUT;
}

/* ---- per-service counts: a small table of service ids, never shrinking ---- */

void sw_svc_counts_init(sw_svc_counts *t, sw_vm_budget *host)
{
    memset(t, 0, sizeof *t);
    t->host = host;
    pthread_mutex_init(&t->lock, NULL);
}

void sw_svc_counts_free(sw_svc_counts *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i]) continue;
        free(t->slots[i]->service);
        free(t->slots[i]);
    }
    free(t->slots);
    pthread_mutex_destroy(&t->lock);
}

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static sw_svc_count **slot(sw_svc_count **slots, size_t cap, const char *service)
{
    size_t j = hash_str(service) & (cap - 1);
    while (slots[j] && strcmp(slots[j]->service, service) != 0) j = (j + 1) & (cap - 1);
    return &slots[j];
}

static int grow(sw_svc_counts *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    sw_svc_count **slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i]) *slot(slots, cap, t->slots[i]->service) = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static sw_svc_count *get_locked(sw_svc_counts *t, const char *service)
{
    if ((t->n + 1) * 2 > t->cap && grow(t) != 0) return NULL;
    sw_svc_count **s = slot(t->slots, t->cap, service);
    if (*s) return *s;
    sw_svc_count *c = calloc(1, sizeof *c);
    if (!c || !(c->service = strdup(service))) {
        free(c);
        return NULL;
    }
    atomic_init(&c->live, 0);
    atomic_init(&c->max, 0);
    atomic_init(&c->ending, false);
    atomic_init(&c->told, false);
    atomic_init(&c->memory.used, 0);
    atomic_init(&c->memory.cap, 0);
    atomic_init(&c->memory.peak, 0);
    atomic_init(&c->memory.refused, false);
    c->memory.parent = t->host;
    c->memory.refusal = "memory limit exceeded";
    atomic_init(&c->live_peak, 0);
    atomic_init(&c->cpu_ns, 0);
    atomic_init(&c->queued, 0);
    atomic_init(&c->root_doomed, false);
    *s = c;
    t->n++;
    return c;
}

sw_svc_count *sw_svc_count_get(sw_svc_counts *t, const char *service, int64_t max, uint64_t memory)
{
    pthread_mutex_lock(&t->lock);
    sw_svc_count *c = get_locked(t, service);
    if (c) {
        atomic_store_explicit(&c->max, max, memory_order_relaxed);
        atomic_store_explicit(&c->memory.cap, (size_t)memory, memory_order_relaxed);
    }
    pthread_mutex_unlock(&t->lock);
    return c;
}

sw_svc_usage sw_svc_usage_of(const sw_svc_count *c)
{
    sw_svc_usage u = {0};
    if (!c) return u;
    u.memory = atomic_load_explicit(&c->memory.used, memory_order_relaxed);
    u.memory_peak = atomic_load_explicit(&c->memory.peak, memory_order_relaxed);
    u.memory_max = atomic_load_explicit(&c->memory.cap, memory_order_relaxed);
    u.cpu_s = (double)atomic_load_explicit(&c->cpu_ns, memory_order_relaxed) / 1e9;
    long long queued = atomic_load_explicit(&c->queued, memory_order_relaxed);
    u.queued = queued > 0 ? queued : 0; /* a taker may settle before the sender counted */
    u.tree_peak = atomic_load_explicit(&c->live_peak, memory_order_relaxed);
    return u;
}
