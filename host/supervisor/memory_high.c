/* memory.high (see memory_high.h): a timer on the supervisor's loop compares the runtime's
 * budget with the watermark; past it, the three services holding the most memory are named
 * (their trees' budgets, proc_limits.h) and the supervisor shuts down gracefully. */
#include "memory_high.h"

#include "json.h"

#define LARGEST 3

/* The LARGEST services of s by memory, largest first, as [{service, memory}...]. */
static json_t *largest(sw_supervisor *s)
{
    const sw_svc *top[LARGEST] = {0};
    uint64_t mem[LARGEST] = {0};
    for (size_t i = 0; i < s->n; i++) {
        uint64_t m = sw_svc_usage_of(s->svcs[i]->tree).memory;
        if (!m) continue;
        for (int k = 0; k < LARGEST; k++) {
            if (top[k] && m <= mem[k]) continue;
            for (int j = LARGEST - 1; j > k; j--) top[j] = top[j - 1], mem[j] = mem[j - 1];
            top[k] = s->svcs[i];
            mem[k] = m;
            break;
        }
    }
    json_t *list = json_array();
    for (int k = 0; k < LARGEST && list && top[k]; k++) {
        json_t *o = json_object();
        int rc = sw_json_set(o, "service", sw_json_str(top[k]->entry->id));
        rc |= sw_json_set(o, "memory", json_integer((json_int_t)mem[k]));
        if (rc != 0 || json_array_append_new(list, o) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

static void check(uv_timer_t *t)
{
    sw_memory_high *m = t->data;
    sw_supervisor *s = m->sup;
    size_t used = atomic_load_explicit(&s->rt->memory.used, memory_order_relaxed);
    if (used <= m->high || s->shutting_down) return;
    m->fired = true;
    uv_timer_stop(t);
    json_t *top = largest(s);
    sw_log_field f[] = {{.key = "memory", .type = SW_LF_INT, .i = (int64_t)used},
                        {.key = "high", .type = SW_LF_INT, .i = (int64_t)m->high},
                        {.key = "largest", .type = SW_LF_JSON, .j = top}};
    sw_log_write(s->log, SW_LOG_ERROR, NULL, "memory high: shutting down", f, 3);
    json_decref(top);
    sw_supervisor_shutdown(s);
}

void sw_memory_high_start(sw_memory_high *m, sw_supervisor *s, uint64_t high)
{
    m->sup = s;
    m->high = high;
    m->fired = false;
    if (!high) return;
    uv_timer_init(s->loop, &m->timer);
    m->timer.data = m;
    uv_timer_start(&m->timer, check, SW_MEMORY_HIGH_CHECK_MS, SW_MEMORY_HIGH_CHECK_MS);
    uv_unref((uv_handle_t *)&m->timer);
}

void sw_memory_high_stop(sw_memory_high *m)
{
    if (m->high) uv_close((uv_handle_t *)&m->timer, NULL);
}
