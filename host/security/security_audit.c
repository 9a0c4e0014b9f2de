/* The audit limiter (security_audit.h): a small table of recent event kinds (hash of kind,
 * actor, action, resource), each with its window and count, and a host-wide per-second
 * budget. Held-back events are counted in one total: an event that gets through reports (and
 * clears) it, so no count is lost, though it is told with whichever event comes next. */
#include "security_audit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

typedef struct slot {
    uint64_t key;
    int64_t window_start;
    unsigned count;
} slot;

struct sw_audit {
    pthread_mutex_t lock;
    slot slots[SLOTS];
    int64_t second_start;
    unsigned this_second;
    uint64_t held_back;
};

sw_audit *sw_audit_new(void)
{
    sw_audit *a = calloc(1, sizeof *a);
    if (a) pthread_mutex_init(&a->lock, NULL);
    return a;
}

void sw_audit_free(sw_audit *a)
{
    if (!a) return;
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static uint64_t mix(uint64_t h, const char *s)
{
    for (s = s ? s : ""; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* a separator: ("ab","c") is not ("a","bc") */
}

/* The slot of key: its own, else an empty one, else the one whose window began first. */
static slot *slot_for(sw_audit *a, uint64_t key)
{
    slot *oldest = &a->slots[key % SLOTS];
    for (size_t i = 0; i < SLOTS; i++) {
        slot *s = &a->slots[(key + i) % SLOTS];
        if (s->key == key) return s;
        if (s->count == 0) { /* never used: slots are not emptied */
            *s = (slot){key, 0, 0};
            return s;
        }
        if (s->window_start < oldest->window_start) oldest = s;
    }
    *oldest = (slot){key, 0, 0};
    return oldest;
}

bool sw_audit_admit(sw_audit *a, int64_t now_ns, const char *kind, const char *actor,
                    const char *action, const char *resource, uint64_t *suppressed)
{
    uint64_t key = mix(mix(mix(mix(1469598103934665603ull, kind), actor), action), resource);
    pthread_mutex_lock(&a->lock);
    slot *s = slot_for(a, key);
    if (s->count == 0 || now_ns - s->window_start >= SW_AUDIT_WINDOW_NS)
        s->window_start = now_ns, s->count = 0;
    if (now_ns - a->second_start >= 1000000000) a->second_start = now_ns, a->this_second = 0;
    bool admit = s->count < SW_AUDIT_BURST && a->this_second < SW_AUDIT_MAX_PER_S;
    s->count++;
    if (admit) {
        a->this_second++;
        *suppressed = a->held_back;
        a->held_back = 0;
    } else {
        a->held_back++;
    }
    pthread_mutex_unlock(&a->lock);
    return admit;
}
