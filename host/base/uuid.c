/* UUIDs (uuid.h). Version 7 keeps the last time stamp it gave (60 bits: milliseconds and the
 * 12-bit fraction) in one atomic for the whole host, so ids from every process and thread
 * sort in the order they were made; that single word is the only state, and like the clock
 * it belongs to the host rather than to any runtime. */
#include "uuid.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "random.h"

static _Atomic uint64_t last_v7; /* (unix_ms << 12) | sub-millisecond fraction */

/* The version nibble and the RFC variant (binary 10) over random bytes. */
static void stamp(uint8_t u[16], unsigned version)
{
    u[6] = (uint8_t)((u[6] & 0x0F) | (version << 4));
    u[8] = (uint8_t)((u[8] & 0x3F) | 0x80);
}

int sw_uuid_v4(uint8_t out[16])
{
    if (sw_random_bytes(out, 16) != 0) return -1;
    stamp(out, 4);
    return 0;
}

/* Now as (ms << 12) | fraction of the millisecond in 1/4096ths. */
static uint64_t clock_stamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    uint64_t frac = ((uint64_t)ts.tv_nsec % 1000000) * 4096 / 1000000;
    return ms << 12 | frac;
}

/* The next stamp: the clock's, or one above the last one given when the clock has not passed it. */
static uint64_t next_stamp(void)
{
    uint64_t now = clock_stamp(), prev = atomic_load(&last_v7), next;
    do {
        next = now > prev ? now : prev + 1;
    } while (!atomic_compare_exchange_weak(&last_v7, &prev, next));
    return next;
}

int sw_uuid_v7(uint8_t out[16])
{
    if (sw_random_bytes(out + 8, 8) != 0) return -1;
    uint64_t s = next_stamp();
    uint64_t ms = s >> 12, frac = s & 0xFFF;
    for (int i = 0; i < 6; i++) out[i] = (uint8_t)(ms >> (40 - 8 * i));
    out[6] = (uint8_t)(frac >> 8);
    out[7] = (uint8_t)frac;
    stamp(out, 7);
    return 0;
}

void sw_uuid_text(const uint8_t u[16], char out[SW_UUID_TEXT])
{
    snprintf(out, SW_UUID_TEXT,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
}
