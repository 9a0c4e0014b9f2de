/* Host limits (docs/security.md "Limits"): their defaults, the count of processes per host and per
 * service, and what a spawn must pass. The memory cap itself is a sw_vm_budget (vm.h) in the
 * runtime, shared by every process's heap and every mailbox. Each service also keeps what its
 * processes use (docs/supervision.md "Resources"): a budget of its own inside the host's,
 * CPU time and queued messages. Counts are relaxed atomics touched once per spawn and end,
 * once per budget step, once per watchdog check that finds a slice running (CPU time is
 * sampled: worker.c) and once per slice that changed a mailbox's depth; nothing here runs per
 * allocation or per message. Thread-safe. */
#ifndef STEWARD_PROC_LIMITS_H
#define STEWARD_PROC_LIMITS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm.h"

#define SW_LIMIT_PROCESSES         100000
#define SW_LIMIT_SERVICE_PROCESSES 10000
#define SW_LIMIT_MEMORY_FRACTION   0.8
#define SW_LIMIT_MAILBOX_MESSAGES  100000
#define SW_LIMIT_MAILBOX_BYTES     ((uint64_t)64 << 20)
#define SW_LIMIT_PER_PROCESS       10000                /* monitors, links and names, each */
#define SW_LIMIT_FS_READ           ((uint64_t)64 << 20) /* fs.read, file:read(n): bytes */
#define SW_LIMIT_EXEC_OUTPUT       ((uint64_t)16 << 20) /* exec.run: stdout, stderr each */
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
        names;            /* per process: monitors and links it holds, names it registered */
    uint64_t fs_read;     /* bytes fs.read returns at most (and file:read(n) asks for) */
    uint64_t exec_output; /* bytes exec.run keeps of each of stdout and stderr */
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
    /* What the service's processes (its own and its tree) use (docs/supervision.md
     * "Resources"). Per run: sw_tree_open resets the peaks, the CPU time and `refused`. */
    sw_vm_budget memory;     /* their Lua heaps, in budget steps; parent: the host's; cap:
                             lifecycle.limits.memory (refusal "memory limit exceeded") */
    atomic_llong live_peak;  /* the most `live` has been this run */
    atomic_ullong cpu_ns;    /* time their slices ran on workers this run (sampled) */
    atomic_llong queued;     /* messages waiting in their mailboxes */
    atomic_bool root_doomed; /* the root was told to end for the memory limit */
} sw_svc_count;

typedef struct sw_svc_counts {
    pthread_mutex_t lock;
    sw_vm_budget *host;   /* every service's memory budget is inside it */
    sw_svc_count **slots; /* open addressing by the id's hash */
    size_t cap, n;
} sw_svc_counts;

/* host: the budget every service's is inside (the runtime's). */
void sw_svc_counts_init(sw_svc_counts *t, sw_vm_budget *host);
void sw_svc_counts_free(sw_svc_counts *t);
/* The count of service (made on first use) with its max set to max and its memory cap to
 * memory (0: none). NULL when out of memory. Thread: any (one lock, taken once per service
 * start). */
sw_svc_count *sw_svc_count_get(sw_svc_counts *t, const char *service, int64_t max, uint64_t memory);

/* Raises c's `live` peak to live (after a spawn was counted). */
static inline void sw_svc_note_live(sw_svc_count *c, long long live)
{
    long long peak = atomic_load_explicit(&c->live_peak, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak_explicit(&c->live_peak, &peak, live, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* What `steward status` and the end of a run show of a service's processes. */
typedef struct sw_svc_usage {
    uint64_t memory, memory_peak, memory_max; /* bytes (steps); max 0: no limit */
    double cpu_s;                             /* this run */
    int64_t queued, tree_peak;                /* tree_peak: spawned ones, this run */
} sw_svc_usage;

/* Reads c (NULL: all zero). Thread: any. */
sw_svc_usage sw_svc_usage_of(const sw_svc_count *c);

/* One more live process in a count of at most max: true, or false (nothing counted). */
static inline bool sw_count_take(atomic_llong *live, long long max)
{
    if (atomic_fetch_add_explicit(live, 1, memory_order_relaxed) < max) return true;
    atomic_fetch_sub_explicit(live, 1, memory_order_relaxed);
    return false;
}

#endif
