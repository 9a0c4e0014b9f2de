/* What a service's run uses (docs/supervision.md "Resources"), read from its process tree's
 * counts in the runtime (proc_limits.h): logged once as each run ends. */
#include "service.h"

#include "sup_internal.h"

void svc_log_usage(const sw_svc *v)
{
    if (!v->tree || !v->run_start) return;
    sw_svc_usage u = sw_svc_usage_of(v->tree);
    sw_log_field f[] = {
        {.key = "uptime", .type = SW_LF_NUM, .d = (double)(uv_hrtime() - v->run_start) / 1e9},
        {.key = "cpu", .type = SW_LF_NUM, .d = u.cpu_s},
        {.key = "memory_peak", .type = SW_LF_INT, .i = (int64_t)u.memory_peak},
        {.key = "processes_peak", .type = SW_LF_INT, .i = 1 + u.tree_peak},
        {.key = "restarts", .type = SW_LF_INT, .i = (int64_t)v->restarts},
    };
    sw_log_write(v->sup->log, SW_LOG_INFO, v->entry->id, "run ended", f, sizeof f / sizeof *f);
}

bool svc_over_memory(const sw_svc *v)
{
    return v->tree && atomic_load_explicit(&v->tree->memory.refused, memory_order_relaxed);
}
