/* Host limits (docs/security.md "Limits"): their defaults, the count of processes per host and per
 * service, and what a spawn must pass. The memory cap itself is a sw_vm_budget (vm.h) in the
 * runtime, shared by every process's heap and every mailbox. Counts are relaxed atomics
 * touched once per spawn and once per end; nothing here runs per allocation or per message.
 * Thread-safe. */
#ifndef STEWARD_PROC_LIMITS_H
#define STEWARD_PROC_LIMITS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SW_LIMIT_PROCESSES         100000
#define SW_LIMIT_SERVICE_PROCESSES 10000
#define SW_LIMIT_MEMORY_FRACTION   0.8
#define SW_LIMIT_MAILBOX_MESSAGES  100000
#define SW_LIMIT_MAILBOX_BYTES     ((uint64_t)64 << 20)
#define SW_LIMIT_PER_PROCESS       10000 /* monitors, links and names, each */
/* A spawn needs this much room under the memory cap: about what a new idle process holds. */
#define SW_LIMIT_SPAWN_BYTES       ((size_t)32 << 10)

/* Typed as the host config's schema writes them (int64_t counts, uint64_t sizes); 0 in any
 * field means its default (sw_limits_resolve). */
typedef struct sw_limits {
    int64_t processes;         /* live processes in the host, prepared ones included */
    int64_t service_processes; /* live processes spawned by one service's processes, at any
                                    depth (its own process not counted); a service's
                                    lifecycle.limits.processes overrides it */
    uint64_t memory;           /* bytes: Lua heaps plus queued deliveries of all processes */
    double memory_fraction;    /* of the RAM (sw_limits_ram) when memory is 0 */
    int64_t mailbox_messages;  /* per process; process.lua limits.mailbox overrides them */
    uint64_t mailbox_bytes;
    int64_t monitors, links,
        names; /* per process: monitors and links it holds, names it registered */
} sw_limits;

/* Fills every 0 field of l with its default; memory from memory_fraction (default 0.8) of
 * sw_limits_ram(). Thread: any. */
void sw_limits_resolve(sw_limits *l);
/* Physical RAM, or the cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes) when
 * that is lower: what the kernel's OOM killer measures against. */
uint64_t sw_limits_ram(void);

/* Called once, on any thread, when the last process of an ending tree is gone. */
typedef void (*sw_tree_gone_fn)(void *arg);

/* The processes of one service id: those its processes spawned, at any depth, that still hold
 * a state — its process tree (docs/supervision.md "A service owns its processes"). A run starts
 * only once the previous run's tree is gone, so at most one run's tree is counted here. Lives
 * as long as the runtime. */
typedef struct sw_svc_count {
    char *service;
    atomic_llong live;
    atomic_llong max;        /* from the service's entry at its latest start */
    atomic_bool ending;      /* the run ended: spawns into the tree are refused */
    atomic_bool told;        /* on_gone was called (or the owner saw the tree gone) */
    sw_tree_gone_fn on_gone; /* written before `ending` is set, read after it is seen */
    void *gone_arg;
    /* uv_hrtime of the latest service.alive() from any process of the service: one relaxed
     * store per call, read by the supervisor's watchdog timer (docs/supervision.md "Watchdog") */
    atomic_uint_fast64_t alive_ns;
} sw_svc_count;

typedef struct sw_svc_counts {
    pthread_mutex_t lock;
    sw_svc_count **slots; /* open addressing by the id's hash */
    size_t cap, n;
} sw_svc_counts;

void sw_svc_counts_init(sw_svc_counts *t);
void sw_svc_counts_free(sw_svc_counts *t);
/* The count of service (made on first use) with its max set to max. NULL when out of memory.
 * Thread: any (one lock, taken once per service start). */
sw_svc_count *sw_svc_count_get(sw_svc_counts *t, const char *service, int64_t max);

/* One more live process in a count of at most max: true, or false (nothing counted). */
static inline bool sw_count_take(atomic_llong *live, long long max)
{
    if (atomic_fetch_add_explicit(live, 1, memory_order_relaxed) < max) return true;
    atomic_fetch_sub_explicit(live, 1, memory_order_relaxed);
    return false;
}

#endif
