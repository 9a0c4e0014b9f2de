/* OS seeds and a per-thread splitmix64 generator (see random.h). */
#include "random.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/random.h>
#include <time.h>

int sw_random_bytes(void *out, size_t n)
{
    unsigned char *p = out;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static _Thread_local uint64_t state;
static _Thread_local bool seeded;

static uint64_t fallback_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)(uintptr_t)pthread_self();
}

uint64_t sw_random_u64(void)
{
    if (!seeded) {
        if (sw_random_bytes(&state, sizeof state) != 0) state = fallback_seed();
        seeded = true;
    }
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double sw_random_unit(void) { return (double)(sw_random_u64() >> 11) * 0x1.0p-53; }
