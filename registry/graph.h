/* The service dependency graph (docs/registry.md "Dependencies"): nodes are process.service entries,
 * an edge A -> B means "A depends on B" and carries the field path it came from. Built once per
 * snapshot; cycles are load errors that print their path. */
#ifndef STEWARD_GRAPH_H
#define STEWARD_GRAPH_H

#include "arena.h"
#include "diag.h"
#include "entry.h"
#include "strmap.h"

typedef struct sw_edge {
    size_t from, to;   /* service indexes */
    const char *why;   /* field path, e.g. "config.database" or "config.cfg via app:cfg field db" */
    const sw_node *at; /* where the reference is written */
} sw_edge;

typedef struct sw_graph {
    size_t n;                  /* services */
    const sw_entry **services; /* in load order */
    size_t n_edges;
    sw_edge *edges; /* grouped by `from`, in field order */
    size_t *deps;   /* edges of service i: edges[deps[i] .. deps[i+1]) */
    size_t *level;  /* 0 for no dependencies, else 1 + the highest dependency level */
    size_t n_levels;
    /* The non-service entries (code, libraries, data, groups) each service reaches by
     * reference, in search order: reach[reach_start[i] .. reach_start[i+1]). What a reload
     * compares to decide whether service i changed. */
    size_t *reach_start;
    const sw_entry **reach;
} sw_graph;

/* Builds the graph of all services in entries; adds cycle errors to diags (each cycle once).
 * `ids` maps every id to its entry. Returns 0, or -1 if there was a cycle. */
int sw_graph_build(sw_graph *g, sw_arena *a, const sw_entry *const *entries, size_t n,
                   const sw_strmap *ids, sw_diags *diags);
/* The service index of e, or (size_t)-1. */
size_t sw_graph_index(const sw_graph *g, const sw_entry *e);

#endif
