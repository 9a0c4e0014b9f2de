/* Spin-then-park for idle workers (see worker_park.h). The figures behind every constant are
 * in docs/architecture.md "Waking a worker". */
#include "worker_park.h"

#include <sched.h>

#define US 1000u
#define MS (1000u * US)

#define SPIN_CAP_MIN_NS  (2 * US) /* the longest spin is twice a wake-up's cost, within these */
#define SPIN_CAP_MAX_NS  (50 * US)
#define SPIN_MIN_NS      500u        /* a budget below this is no spin at all */
#define WAKE_GUESS_NS    (10 * US)   /* what a wake-up costs until one is measured */
#define PAUSES_PER_CLOCK 8           /* a clock read costs about one pause */
#define YIELD_EVERY_NS   (2 * US)    /* how often a spin lets another thread have the CPU */
#define SLOW_YIELD_NS    (200 * US)  /* a yield this long: another thread wanted the CPU */
#define QUIET_FIRST_NS   (10 * MS)   /* no spinning for this long after one, doubling ... */
#define QUIET_MAX_NS     (1000 * MS) /* ... up to this while they keep coming */

/* Workers of the whole host (every pool) that are not parked. A worker spins only while
 * another is awake: when all are parked, no worker can send it anything soon. */
static atomic_int awake;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

int sw_park_init(sw_park *k, uv_loop_t *loop) { return sw_park_init_cb(k, loop, NULL); }

int sw_park_init_cb(sw_park *k, uv_loop_t *loop, sw_wake_cb cb)
{
    atomic_init(&k->sleeping, 0);
    atomic_init(&k->claimed_at, 0);
    k->in_loop = false;
    k->budget_ns = k->spun_ns = 0;
    k->wake_ns = WAKE_GUESS_NS;
    k->quiet_until = k->quiet_ns = k->last_slow = k->parked_at = 0;
    atomic_init(&k->parks, 0);
    return sw_wake_init(loop, &k->wake, cb);
}

void sw_park_close(sw_park *k) { sw_wake_close(&k->wake, NULL); }

void sw_park_awake_begin(void) { atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed); }

void sw_park_awake_end(void) { atomic_fetch_sub_explicit(&awake, 1, memory_order_relaxed); }

/* The sender's half of the protocol. The fence orders the caller's publication before the
 * flag's load, and pairs with the owner's fence in sw_park_sleep: of the two fences, whichever
 * comes second sees the other side's write, so either the owner sees the work or this sees
 * the flag. The exchange makes one sender of many the one that writes. */
bool sw_park_wake(sw_park *k)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&k->sleeping, memory_order_relaxed) ||
        !atomic_exchange_explicit(&k->sleeping, 0, memory_order_relaxed))
        return false;
    atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed);
    atomic_store_explicit(&k->claimed_at, uv_hrtime(), memory_order_relaxed);
    sw_wake_signal(&k->wake); /* level-triggered: a write before the owner's wait still wakes it */
    return true;
}

/* Lowers the owner's own flag; false if a sender had already (and counted it awake). */
static bool rise(sw_park *k)
{
    if (!atomic_exchange_explicit(&k->sleeping, 0, memory_order_relaxed)) return false;
    atomic_fetch_add_explicit(&awake, 1, memory_order_relaxed);
    return true;
}

/* Spinning for about as long as a wake-up costs loses at most twice the best choice (the
 * classic rule for spin-then-block); the cap follows what wake-ups cost here. */
static uint64_t spin_cap(const sw_park *k)
{
    return min_u64(max_u64(2 * k->wake_ns, SPIN_CAP_MIN_NS), SPIN_CAP_MAX_NS);
}

static void set_budget(sw_park *k, uint64_t ns)
{
    k->budget_ns = ns < SPIN_MIN_NS ? 0 : min_u64(ns, spin_cap(k));
}

/* A yield that took a time slice: another thread wanted this CPU, and a spinner would keep
 * it from it. Stop spinning for a while, longer while it recurs. */
static void quiet_down(sw_park *k, uint64_t now)
{
    bool recurs = k->quiet_ns && now - k->last_slow < QUIET_MAX_NS;
    k->quiet_ns = recurs ? min_u64(2 * k->quiet_ns, QUIET_MAX_NS) : QUIET_FIRST_NS;
    k->last_slow = now;
    k->quiet_until = now + k->quiet_ns;
}

static bool others_awake(void) { return atomic_load_explicit(&awake, memory_order_relaxed) > 1; }

/* Pauses, with a clock read every PAUSES_PER_CLOCK of them (spins are bounded by time:
 * a pause lasts 10 to 140 cycles depending on the CPU) and a yield every YIELD_EVERY_NS. */
bool sw_park_spin(sw_park *k, sw_park_check found, void *arg)
{
    k->spun_ns = 0;
    uint64_t start = uv_hrtime(), now = start, next_yield = start + YIELD_EVERY_NS;
    if (!k->budget_ns || now < k->quiet_until || !others_awake()) return false;
    while (now - start < k->budget_ns) {
        for (int i = 0; i < PAUSES_PER_CLOCK; i++) {
            if (found(arg)) {
                /* caught after t: spin at least 2t next time */
                set_budget(k, max_u64(k->budget_ns, 2 * (uv_hrtime() - start) + US));
                return true;
            }
            cpu_relax();
        }
        now = uv_hrtime();
        if (now >= next_yield) {
            sched_yield();
            uint64_t after = uv_hrtime();
            if (after - now > SLOW_YIELD_NS) {
                quiet_down(k, after);
                now = after;
                break;
            }
            now = after;
            next_yield = now + YIELD_EVERY_NS;
        }
        if (!others_awake()) break;
    }
    k->spun_ns = now - start;
    return false;
}

/* After a park: learn what a wake-up costs and how long the wait was. A wait that a spin of
 * at most the cap would have covered doubles the budget (to twice the wait at least); a
 * longer one, or a wake-up by the loop itself (timer, socket), halves it. */
static void learn(sw_park *k, uint64_t parked_at, bool claimed)
{
    if (!claimed) {
        set_budget(k, k->budget_ns / 2);
        return;
    }
    uint64_t now = uv_hrtime();
    uint64_t at = atomic_load_explicit(&k->claimed_at, memory_order_relaxed);
    uint64_t cost = now > at ? now - at : 0;
    k->wake_ns = k->wake_ns - k->wake_ns / 8 + cost / 8;
    uint64_t wait = (at > parked_at ? at - parked_at : 0) + k->spun_ns;
    if (wait < spin_cap(k)) set_budget(k, max_u64(2 * wait + US, 2 * k->budget_ns));
    else set_budget(k, k->budget_ns / 2);
}

/* The owner's half of the protocol (see sw_park_wake): flag, fence, check, wait. */
bool sw_park_sleep_begin(sw_park *k, sw_park_check has_work, void *arg)
{
    k->parked_at = uv_hrtime();
    atomic_fetch_sub_explicit(&awake, 1, memory_order_relaxed);
    atomic_store_explicit(&k->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (has_work(arg)) {
        rise(k); /* a sender may have swapped it already: its write makes one spurious pass */
        return false;
    }
    atomic_fetch_add_explicit(&k->parks, 1, memory_order_relaxed);
    return true;
}

void sw_park_sleep_end(sw_park *k) { learn(k, k->parked_at, !rise(k)); }

void sw_park_sleep(sw_park *k, uv_loop_t *loop, sw_park_check has_work, void *arg)
{
    if (!sw_park_sleep_begin(k, has_work, arg)) return;
    k->in_loop = true;
    uv_run(loop, UV_RUN_ONCE);
    k->in_loop = false;
    sw_park_sleep_end(k);
}
