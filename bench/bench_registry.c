/* Registry load benchmark: a generated app of 10,000 entries (2,000 services with random
 * references, 50 files). Prints the median time to load + validate + build the graph, the graph
 * build alone, and the floor: a plain libyaml event parse of the same files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "bench_util.h"
#include "registry.h"

#define FILES 50
#define PER_FILE \
    200 /* 40 services, 40 process.lua, 20 library.lua, 80 registry.entry, 20 policies */
#define ROUNDS 9

/* Services only reference services with a lower number, so the graph is a DAG. */
static void generate(const char *dir)
{
    srand(42);
    for (int f = 0; f < FILES; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/part%02d.yaml", dir, f);
        FILE *o = fopen(path, "w");
        if (!o) {
            perror(path);
            exit(1);
        }
        fprintf(o, "version: \"1.0\"\nnamespace: app\nmeta: { file: %d }\nentries:\n", f);
        for (int i = 0; i < 20; i++) {
            int id = f * 20 + i;
            fprintf(o,
                    "  - name: lib%d\n    kind: library.lua\n    source: \"return { v = %d }\"\n",
                    id, id);
            fprintf(o,
                    "  - name: pol%d\n    kind: security.policy\n    policy:\n      actions: [ "
                    "\"data.read\", \"data.list\" ]\n"
                    "      resources: \"app.data:*\"\n      effect: allow\n      conditions:\n"
                    "        - { field: actor.meta.clearance, operator: gte, value: %d }\n    "
                    "groups: [ g%d ]\n",
                    id, i % 5, id % 10);
        }
        for (int i = 0; i < 40; i++) {
            int id = f * 40 + i;
            fprintf(o,
                    "  - name: proc%d\n    kind: process.lua\n    source: \"return function() "
                    "return %d end\"\n"
                    "    imports: { util: lib%d }\n    limits: { memory: 32MB }\n",
                    id, id, id / 2);
            fprintf(o,
                    "  - name: cfg%d\n    kind: registry.entry\n    data: { level: %d, name: "
                    "\"config %d\", target: %s }\n",
                    2 * id, id, id, id > 0 ? "app:svc0" : "none");
            fprintf(o,
                    "  - name: cfg%d\n    kind: registry.entry\n    data: { nested: { list: [ 1, "
                    "2, \"app:cfg%d\" ] } }\n",
                    2 * id + 1, 2 * id);
            fprintf(o,
                    "  - name: svc%d\n    kind: process.service\n    process: proc%d\n    input: [ "
                    "\"a\", %d ]\n"
                    "    config: { settings: app:cfg%d, peer: %s, retries: 3 }\n"
                    "    lifecycle:\n      auto_start: true\n      restart: { policy: always, "
                    "initial_delay: 250ms, max_delay: 30s }\n",
                    id, id, id, 2 * id + 1, id > 1 ? "app:svc1" : "none");
            if (id > 2)
                fprintf(o, "      depends_on: [ svc%d, svc%d ]\n", rand() % id, rand() % id);
            if (id > 0)
                fprintf(o,
                        "      security: { actor: { id: \"service:%d\", meta: { clearance: %d } }, "
                        "policies: [ pol%d ], groups: [ g%d ] }\n",
                        id, id % 4, id / 2, id % 10);
        }
        fclose(o);
    }
}

static void yaml_floor(const char *dir)
{
    for (int f = 0; f < FILES; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/part%02d.yaml", dir, f);
        FILE *in = fopen(path, "rb");
        yaml_parser_t p;
        yaml_parser_initialize(&p);
        yaml_parser_set_input_file(&p, in);
        yaml_event_t ev;
        int done = 0;
        while (!done && yaml_parser_parse(&p, &ev)) {
            done = ev.type == YAML_STREAM_END_EVENT;
            yaml_event_delete(&ev);
        }
        yaml_parser_delete(&p);
        fclose(in);
    }
}

int main(void)
{
    char dir[] = "/tmp/steward-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    generate(dir);
    double load[ROUNDS], graph[ROUNDS], floor_[ROUNDS];
    size_t entries = 0, services = 0, edges = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = bench_now();
        yaml_floor(dir);
        floor_[r] = bench_now() - t0;

        sw_diags d;
        sw_diags_init(&d);
        t0 = bench_now();
        sw_registry *reg = sw_registry_load_dir(dir, &d);
        load[r] = bench_now() - t0;
        if (!reg) {
            sw_diags_finish(&d);
            sw_diags_print(&d, stderr);
            return 1;
        }
        entries = reg->n_entries;
        services = reg->n_services;
        edges = reg->graph.n_edges;

        sw_graph g;
        t0 = bench_now();
        sw_graph_build(&g, &reg->arena, (const sw_entry *const *)reg->entries, reg->n_entries,
                       &reg->ids, &d);
        graph[r] = bench_now() - t0;
        sw_registry_free(reg);
        sw_diags_free(&d);
    }
    double ml = bench_median(load, ROUNDS), mg = bench_median(graph, ROUNDS),
           mf = bench_median(floor_, ROUNDS);
    printf("registry: %zu entries, %zu services, %zu edges, %d files (median of %d)\n", entries,
           services, edges, FILES, ROUNDS);
    printf("  load + validate + graph  %8.1f ms   %9.0f entries/s   (target <= 150 ms)\n", ml * 1e3,
           entries / ml);
    printf("  graph build alone        %8.1f ms                          (target <= 20 ms)\n",
           mg * 1e3);
    printf("  floor: libyaml parse     %8.1f ms   %9.0f entries/s\n", mf * 1e3, entries / mf);
    printf("  ratio load / floor       %8.2fx\n", ml / mf);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
