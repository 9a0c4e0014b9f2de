/* Host configuration: the registry's YAML tree and schema walker, applied to one small file. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "control.h"
#include "log_files.h"
#include "log_ring.h"
#include "metrics.h"
#include "readfile.h"
#include "schema.h"
#include "units.h"
#include "yaml_tree.h"

#define HC(f) offsetof(sw_host_config, f)

static const char *const log_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};

static void parse_log_format(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    for (const char *const *f = log_formats; *f; f++)
        if (strcmp(*f, s) == 0) {
            *(const char **)dst = s;
            return;
        }
    sw_parse_error(p, n, "unknown log format \"%s\" (text or json)", s);
}

static void parse_log_level(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    for (const char *const *f = log_levels; *f; f++)
        if (strcmp(*f, s) == 0) {
            *(const char **)dst = s;
            return;
        }
    sw_parse_error(p, n, "unknown log level \"%s\" (debug, info, warn or error)", s);
}

/* A memory size: bytes ("4GB", a number of bytes) or a fraction of the RAM (a number up to 1,
 * or "80%"), into *bytes or *fraction. */
static void parse_memory_size(sw_parse *p, const sw_node *n, uint64_t *bytes, double *fraction)
{
    const char *hint =
        "use a size (\"4GB\"), a fraction of the RAM (0.8) or a percentage (\"80%\")";
    if (n->type == SW_NODE_SCALAR && (n->scalar == SW_SCALAR_INT || n->scalar == SW_SCALAR_FLOAT)) {
        if (n->num > 0 && n->num <= 1) {
            *fraction = n->num;
            return;
        }
        if (n->num > 1 && n->num < 1.8e19 && n->num == (double)(uint64_t)n->num) {
            *bytes = (uint64_t)n->num;
            return;
        }
        sw_parse_error(p, n, "invalid memory limit %s: %s", n->str, hint);
        return;
    }
    if (!sw_node_is_string(n)) {
        sw_parse_error(p, n, "expected a memory limit, got %s: %s", sw_node_describe(n), hint);
        return;
    }
    size_t len = strlen(n->str);
    if (len > 1 && n->str[len - 1] == '%') {
        char *end;
        double pct = strtod(n->str, &end);
        if (end == n->str + len - 1 && pct > 0 && pct <= 100) {
            *fraction = pct / 100;
            return;
        }
    } else if (sw_parse_size(n->str, bytes) == 0 && *bytes > 0) {
        return;
    }
    *bytes = 0;
    sw_parse_error(p, n, "invalid memory limit \"%s\": %s", n->str, hint);
}

/* limits.memory: the hard cap. */
static void parse_memory(sw_parse *p, const sw_node *n, void *dst)
{
    sw_limits *l = dst;
    parse_memory_size(p, n, &l->memory, &l->memory_fraction);
}

/* memory.high: the watermark; where it was written, for the check against the hard cap. */
static void parse_memory_high(sw_parse *p, const sw_node *n, void *dst)
{
    sw_host_config *c = dst;
    parse_memory_size(p, n, &c->memory_high, &c->memory_high_fraction);
    c->memory_high_line = n->line;
    c->memory_high_col = n->col;
}

/* metrics.listen: "HOST:PORT", checked here so a bad one names its line. */
static void parse_metrics_listen(sw_parse *p, const sw_node *n, void *dst)
{
    const char *s;
    if (!sw_read_string(p, n, &s)) return;
    sw_net_addr a;
    char err[512];
    if (sw_metrics_parse_listen(s, &a, err, sizeof err) != 0) sw_parse_error(p, n, "%s", err);
    else *(const char **)dst = s;
}

#define LIM(f) (HC(limits) + offsetof(sw_limits, f))
static const sw_field mailbox_fields[] = {
    {.name = "messages", .type = SW_F_INT, .offset = LIM(mailbox_messages), .min = 1, .max = 1e9},
    {.name = "bytes", .type = SW_F_SIZE, .offset = LIM(mailbox_bytes), .flags = SW_F_POSITIVE},
};
static const sw_schema mailbox_schema = {mailbox_fields, 2};
static const sw_field limits_fields[] = {
    {.name = "processes", .type = SW_F_INT, .offset = LIM(processes), .min = 1, .max = 1e8},
    {.name = "service_processes",
     .type = SW_F_INT,
     .offset = LIM(service_processes),
     .min = 1,
     .max = 1e8},
    {.name = "memory", .type = SW_F_CUSTOM, .offset = HC(limits), .custom = parse_memory},
    {.name = "mailbox", .type = SW_F_OBJECT, .offset = 0, .sub = &mailbox_schema},
    {.name = "monitors", .type = SW_F_INT, .offset = LIM(monitors), .min = 1, .max = 1e9},
    {.name = "links", .type = SW_F_INT, .offset = LIM(links), .min = 1, .max = 1e9},
    {.name = "names", .type = SW_F_INT, .offset = LIM(names), .min = 1, .max = 1e9},
    {.name = "fs_read", .type = SW_F_SIZE, .offset = LIM(fs_read), .flags = SW_F_POSITIVE},
    {.name = "exec_output", .type = SW_F_SIZE, .offset = LIM(exec_output), .flags = SW_F_POSITIVE},
};
static const sw_schema limits_schema = {limits_fields,
                                        sizeof limits_fields / sizeof *limits_fields};

static const sw_field security_fields[] = {
    {.name = "strict_mode", .type = SW_F_BOOL, .offset = HC(strict_mode)}};
static const sw_field shutdown_fields[] = {
    {.name = "timeout", .type = SW_F_DURATION, .offset = HC(shutdown_timeout_ns)}};
static const sw_field log_fields[] = {
    {.name = "format", .type = SW_F_CUSTOM, .offset = HC(log_format), .custom = parse_log_format},
    {.name = "level", .type = SW_F_CUSTOM, .offset = HC(log_level), .custom = parse_log_level},
    {.name = "dir", .type = SW_F_STRING, .offset = HC(log_dir), .flags = SW_F_NONEMPTY},
    {.name = "max_size", .type = SW_F_SIZE, .offset = HC(log_max_size), .flags = SW_F_POSITIVE},
    {.name = "max_files", .type = SW_F_INT, .offset = HC(log_max_files), .min = 1, .max = 1000},
    {.name = "ring_lines", .type = SW_F_INT, .offset = HC(log_ring_lines), .min = 0, .max = 1e6},
    {.name = "ring_size", .type = SW_F_SIZE, .offset = HC(log_ring_size), .flags = SW_F_POSITIVE},
};
static const sw_field control_fields[] = {
    {.name = "socket", .type = SW_F_STRING, .offset = HC(control_socket)},
    {.name = "idle_timeout",
     .type = SW_F_DURATION,
     .offset = HC(control_idle_timeout_ns),
     .flags = SW_F_POSITIVE},
    {.name = "request_timeout",
     .type = SW_F_DURATION,
     .offset = HC(control_request_timeout_ns),
     .flags = SW_F_POSITIVE},
};
static const sw_field exec_fields[] = {
    {.name = "allow", .type = SW_F_BOOL, .offset = HC(exec_allow)}};
static const sw_schema exec_schema = {exec_fields, 1};
static const sw_field metrics_fields[] = {{.name = "listen",
                                           .type = SW_F_CUSTOM,
                                           .offset = HC(metrics_listen),
                                           .custom = parse_metrics_listen}};
static const sw_schema metrics_schema = {metrics_fields, 1};
static const sw_field memory_fields[] = {
    {.name = "high", .type = SW_F_CUSTOM, .offset = 0, .custom = parse_memory_high}};
static const sw_schema memory_schema = {memory_fields, 1};
static const sw_schema security_schema = {security_fields, 1},
                       shutdown_schema = {shutdown_fields, 1},
                       log_schema = {log_fields, sizeof log_fields / sizeof *log_fields},
                       control_schema = {control_fields, 3};

/* Sub-objects write at offsets of the whole struct: each OBJECT field sits at offset 0. */
static const sw_field config_fields[] = {
    {.name = "workers", .type = SW_F_INT, .offset = HC(workers), .min = 1, .max = 1024},
    {.name = "security", .type = SW_F_OBJECT, .offset = 0, .sub = &security_schema},
    {.name = "shutdown", .type = SW_F_OBJECT, .offset = 0, .sub = &shutdown_schema},
    {.name = "log", .type = SW_F_OBJECT, .offset = 0, .sub = &log_schema},
    {.name = "control", .type = SW_F_OBJECT, .offset = 0, .sub = &control_schema},
    {.name = "limits", .type = SW_F_OBJECT, .offset = 0, .sub = &limits_schema},
    {.name = "exec", .type = SW_F_OBJECT, .offset = 0, .sub = &exec_schema},
    {.name = "memory", .type = SW_F_OBJECT, .offset = 0, .sub = &memory_schema},
    {.name = "metrics", .type = SW_F_OBJECT, .offset = 0, .sub = &metrics_schema},
};
static const sw_schema config_schema = {config_fields,
                                        sizeof config_fields / sizeof *config_fields};

/* memory.high must be below the hard cap (limits.memory, or its default): past the cap
 * allocations fail, so a watermark at or above it would never be seen. */
static int check_memory_high(const sw_host_config *c, const char *file, sw_diags *diags)
{
    uint64_t high = sw_host_config_memory_high(c);
    sw_limits cap = c->limits;
    sw_limits_resolve(&cap);
    if (!high || high < cap.memory) return 0;
    sw_diags_add(diags, file, (unsigned)c->memory_high_line, (unsigned)c->memory_high_col, NULL,
                 "memory.high", "%.1f MB is not below the hard cap limits.memory (%.1f MB)",
                 (double)high / (1 << 20), (double)cap.memory / (1 << 20));
    return -1;
}

void sw_host_config_defaults(sw_host_config *c)
{
    memset(c, 0, sizeof *c);
    c->strict_mode = true;
    c->shutdown_timeout_ns = 30 * SW_NS_PER_S;
    c->control_idle_timeout_ns = SW_CTL_IDLE_TIMEOUT_S * SW_NS_PER_S;
    c->control_request_timeout_ns = SW_CTL_REQUEST_TIMEOUT_S * SW_NS_PER_S;
    c->log_max_size = SW_LOG_FILES_MAX_SIZE;
    c->log_max_files = SW_LOG_FILES_MAX_FILES;
    c->log_ring_lines = SW_LOG_RING_LINES;
    c->log_ring_size = SW_LOG_RING_BYTES;
}

void sw_host_config_log_keep(const sw_host_config *c, sw_log_keep *k)
{
    *k = (sw_log_keep){.ring_lines = (size_t)c->log_ring_lines,
                       .ring_bytes = (size_t)c->log_ring_size,
                       .dir = c->log_dir,
                       .max_size = c->log_max_size,
                       .max_files = (unsigned)c->log_max_files};
}

int sw_host_config_load(sw_host_config *c, const char *path, sw_diags *diags)
{
    size_t len = 0;
    const char *why = NULL;
    char *text =
        sw_read_regular_file(path, (size_t)1 << 24, "larger than 16 MB", false, &len, &why);
    if (!text) {
        sw_diags_add(diags, path, 0, 0, NULL, NULL, "cannot read the host config: %s", why);
        return -1;
    }
    sw_arena *a = malloc(sizeof *a);
    sw_arena_init(a);
    c->owner = a;
    const char *file = sw_arena_strdup(a, path);
    const sw_node *root = sw_yaml_parse(a, file, text, len, diags);
    free(text);
    if (!root) return -1;
    if (root->type != SW_NODE_MAP) {
        sw_diags_add(diags, file, root->line, root->col, NULL, NULL,
                     "the host config must be a mapping");
        return -1;
    }
    sw_parse p = {.arena = a, .diags = diags, .file = file, .ok = true};
    sw_schema_parse(&p, &config_schema, root, c, NULL);
    free(p.pending);
    if (p.ok && check_memory_high(c, file, diags) != 0) return -1;
    return p.ok ? 0 : -1;
}

uint64_t sw_host_config_memory_high(const sw_host_config *c)
{
    if (c->memory_high) return c->memory_high;
    return c->memory_high_fraction > 0
               ? (uint64_t)((double)sw_limits_ram() * c->memory_high_fraction)
               : 0;
}

void sw_host_config_free(sw_host_config *c)
{
    if (c->owner) {
        sw_arena_free(c->owner);
        free(c->owner);
    }
    c->owner = NULL;
}

void sw_host_config_runtime(const sw_host_config *c, sw_runtime_config *rc)
{
    *rc = (sw_runtime_config){.workers = (int)c->workers,
                              .security_relaxed = !c->strict_mode,
                              .limits = c->limits,
                              .exec_allow = c->exec_allow};
}

int sw_host_config_read(sw_host_config *c, const char *path)
{
    sw_host_config_defaults(c);
    if (!path) return 0;
    sw_diags diags;
    sw_diags_init(&diags);
    int rc = sw_host_config_load(c, path, &diags);
    sw_diags_finish(&diags);
    sw_diags_print(&diags, stderr);
    sw_diags_free(&diags);
    if (rc != 0) sw_host_config_free(c);
    return rc != 0 ? -1 : 0;
}
