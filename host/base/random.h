/* Random numbers for the host: seeds drawn from the OS (getrandom), so two hosts, two runs or
 * two processes never share a sequence, and a fast generator per thread (splitmix64) for
 * draws that need no secrecy (restart jitter, per-process seeds of math.random). Not for
 * secrets: a token needs sw_random_bytes. */
#ifndef STEWARD_RANDOM_H
#define STEWARD_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/* n bytes from the OS's random source. 0, or -1 if it cannot be read. Thread: any. */
int sw_random_bytes(void *out, size_t n);
/* The next number of this thread's generator, seeded from the OS on first use (from the clock
 * and the thread if the OS cannot give a seed). Thread: any (each thread its own generator). */
uint64_t sw_random_u64(void);
/* A uniform double in [0, 1). Thread: any. */
double sw_random_unit(void);

#endif
