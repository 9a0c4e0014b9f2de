/* dir:// sources of library.lua: a directory of Lua modules read whole at registry load
 * (docs/registry.md "Module trees"). */
#ifndef STEWARD_LIB_TREE_H
#define STEWARD_LIB_TREE_H

#include "schema.h"

/* Limits of one tree, documented in docs/registry.md. */
#define SW_TREE_MAX_FILES 1000
#define SW_TREE_MAX_DEPTH 16
#define SW_TREE_MAX_BYTES (64u * 1024 * 1024)

/* Reads the tree named by node n ("dir://lib/x" relative to the YAML file and inside the app,
 * or "dir:///abs/path") into src: src->tree, and src->path/text the root module (DIR.lua
 * beside the directory, else DIR/init.lua; NULL if neither). Errors go to p. */
void sw_lib_tree_load(sw_parse *p, const sw_node *n, sw_source *src);

/* Whether two trees hold the same files with the same text (reload compares content). */
bool sw_lib_tree_equal(const sw_lib_tree *a, const sw_lib_tree *b);

#endif
