/* Declarative field schemas: a kind is a table of fields (name, type, offset into its struct,
 * constraints); one walker validates a YAML mapping against a table, fills the struct and
 * reports every problem with its field path. References are recorded here and resolved by the
 * loader once every entry is known. */
#ifndef STEWARD_SCHEMA_H
#define STEWARD_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "diag.h"
#include "entry.h"

typedef enum sw_ftype {
    SW_F_STRING,
    SW_F_BOOL,
    SW_F_INT,
    SW_F_NUMBER,
    SW_F_DURATION,
    SW_F_SIZE,
    SW_F_ENUM,
    SW_F_REF,
    SW_F_REFLIST,
    SW_F_ANY,
    SW_F_LIST,
    SW_F_MAP,
    SW_F_OBJECT,
    SW_F_CUSTOM
} sw_ftype;

enum { SW_F_REQUIRED = 1, SW_F_NONEMPTY = 2, SW_F_GROUPREF = 4, SW_F_POSITIVE = 8 };
/* DURATION: also takes `infinity` (SW_DURATION_INFINITE, units.h). */
enum { SW_F_INFINITE = 16 };

typedef struct sw_parse sw_parse;
typedef struct sw_schema sw_schema;

typedef struct sw_field {
    const char *name;
    sw_ftype type;
    size_t offset;
    unsigned flags;
    unsigned kinds;           /* REF/REFLIST: allowed target kinds (SW_KINDBIT) */
    const char *const *enums; /* ENUM: NULL-terminated names, value = index */
    const sw_schema *sub;     /* OBJECT; CUSTOM: the mapping's fields, if it is one */
    void (*custom)(sw_parse *p, const sw_node *n, void *dst);
    double min, max; /* INT/NUMBER bounds, inclusive; applied when min < max */
} sw_field;

struct sw_schema {
    const sw_field *fields;
    size_t n;
};

/* A reference waiting for resolution once every entry is loaded. */
typedef struct sw_pending_ref {
    sw_ref *ref;
    unsigned kinds;
    bool group; /* a security group name, not an entry */
    const char *entry_id, *path;
} sw_pending_ref;

struct sw_parse {
    sw_arena *arena;
    sw_diags *diags;
    const char *file, *dir, *entry_id, *ns;
    const char *app_root; /* realpath of the app directory, for file:// checks */
    char path[512];
    size_t path_len;
    sw_pending_ref *pending;
    size_t n_pending, cap_pending;
    bool ok; /* false after any error in the current entry */
};

/* Validates map against schema and fills dst (defaults must already be in dst). `skip` lists
 * keys the caller handles itself (name, kind, meta). Unknown keys are errors with a suggestion. */
void sw_schema_parse(sw_parse *p, const sw_schema *schema, const sw_node *map, void *dst,
                     const char *const *skip);

/* Reports an error at node n for the current entry and field path (plus `sub`, if given). */
void sw_parse_error(sw_parse *p, const sw_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Field path bookkeeping: push ".name" or "[i]"; pop restores the previous length. */
size_t sw_path_push(sw_parse *p, const char *name);
size_t sw_path_push_index(sw_parse *p, size_t i);
void sw_path_pop(sw_parse *p, size_t saved);

/* Qualifies (no colon -> own namespace), checks the id's syntax, records it for resolution. */
void sw_parse_ref(sw_parse *p, const sw_node *n, unsigned kinds, bool group, sw_ref *dst);
/* Qualifies a name written in a reference field. Arena-owned. */
const char *sw_qualify(sw_parse *p, const char *name);
/* [A-Za-z0-9_.-]+ */
bool sw_valid_name(const char *s);
/* ns:name, both valid names. */
bool sw_valid_id(const char *id);

/* The closest candidate within edit distance 2 (or a third of the word), or NULL. */
const char *sw_suggest(const char *word, const char *const *candidates, size_t n);

/* Typed readers shared by custom fields: each reports its own error and returns false. */
bool sw_read_string(sw_parse *p, const sw_node *n, const char **out);
bool sw_read_strlist(sw_parse *p, const sw_node *n, bool allow_scalar, sw_strlist *out);

#endif
