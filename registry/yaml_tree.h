/* A YAML document as a tree of positioned nodes, built from libyaml's events. Owns the rules
 * that keep hostile input cheap: nesting depth, alias expansion (billion laughs) and duplicate
 * keys are refused with libyaml-style positions. Nodes live in the caller's arena. */
#ifndef STEWARD_YAML_TREE_H
#define STEWARD_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "diag.h"

typedef enum { SW_NODE_SCALAR, SW_NODE_MAP, SW_NODE_SEQ } sw_node_type;

/* The type a scalar has under YAML 1.2's core schema: quoted scalars are always strings. */
typedef enum {
    SW_SCALAR_NULL,
    SW_SCALAR_BOOL,
    SW_SCALAR_INT,
    SW_SCALAR_FLOAT,
    SW_SCALAR_STRING
} sw_scalar_kind;

typedef struct sw_node sw_node;
struct sw_node {
    sw_node_type type;
    sw_scalar_kind scalar; /* scalars only */
    unsigned line, col;    /* 1-based */
    const char *file;
    const char *str; /* scalars: text, NUL-terminated */
    size_t len;      /* scalars: text length */
    double num;      /* INT/FLOAT: value; BOOL: 0 or 1 */
    size_t n;        /* MAP: number of pairs; SEQ: number of items */
    sw_node **kids;  /* MAP: key, value, key, value…; SEQ: items */
    size_t weight;   /* nodes in the expanded subtree, aliases counted in full */
};

#define SW_YAML_MAX_DEPTH    64
#define SW_YAML_MAX_EXPANDED 1000000

/* Parses one document from buf. Returns the root node, or NULL after adding every problem found
 * to diags (libyaml stops at the first syntax error, so a syntax error is one diagnostic). An
 * empty document is an error. `file` must outlive the tree (arena-owned is fine). */
sw_node *sw_yaml_parse(sw_arena *arena, const char *file, const char *buf, size_t len,
                       sw_diags *diags);

/* Map helpers: the value for key, or NULL. */
sw_node *sw_node_get(const sw_node *map, const char *key);
static inline sw_node *sw_node_key(const sw_node *map, size_t i) { return map->kids[2 * i]; }
static inline sw_node *sw_node_val(const sw_node *map, size_t i) { return map->kids[2 * i + 1]; }
static inline bool sw_node_is_string(const sw_node *n)
{
    return n && n->type == SW_NODE_SCALAR && n->scalar == SW_SCALAR_STRING;
}
/* Same content (types, scalar texts, keys in order, items), wherever the nodes were written. */
bool sw_node_equal(const sw_node *a, const sw_node *b);
/* "a string", "a number", "a mapping", "a list", "null", "a boolean" */
const char *sw_node_describe(const sw_node *n);

#endif
