/* Process ids and registered names. A pid is a 64-bit number, shown to Lua as "host|0x0001";
 * the table maps live pids to their process with a reference taken under its lock, so no
 * thread ever holds a raw pointer to a process that may be freed. Thread-safe. */
#ifndef STEWARD_PIDTABLE_H
#define STEWARD_PIDTABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_proc sw_proc;

typedef struct sw_pidtable {
    pthread_mutex_t lock;
    uint64_t next_id;
    /* id -> proc, open addressing; slots with proc NULL and id != 0 are tombstones */
    struct pid_slot { uint64_t id; sw_proc *proc; } *slots;
    size_t cap, used, live;
    /* name -> pid */
    struct name_slot { char *name; uint64_t id; } *names;
    size_t names_cap, names_used;
} sw_pidtable;

void sw_pidtable_init(sw_pidtable *t);
void sw_pidtable_destroy(sw_pidtable *t);
/* A new unique id (never 0). */
uint64_t sw_pidtable_add(sw_pidtable *t, sw_proc *p);
void sw_pidtable_remove(sw_pidtable *t, uint64_t id);
/* The live process with this id, with a reference the caller must release
 * (sw_proc_release), or NULL. */
sw_proc *sw_pidtable_grab(sw_pidtable *t, uint64_t id);
size_t sw_pidtable_live(sw_pidtable *t);

/* Names. register: 0, -1 if the name is taken by a live process, -2 if id is not alive (as
 * Erlang's register: a name must name someone). lookup: the id or 0. */
int sw_pidtable_register(sw_pidtable *t, const char *name, uint64_t id);
uint64_t sw_pidtable_lookup(sw_pidtable *t, const char *name);
/* Removes name if it belongs to id (id 0: whoever holds it); returns 0 if removed, -1 if the
 * name is not held (never registered, unregistered, or its holder ended). */
int sw_pidtable_unregister(sw_pidtable *t, const char *name, uint64_t id);

/* "host|0x0001" <-> id. format writes at most size bytes; parse returns 0 if malformed. */
void sw_pid_format(uint64_t id, char *buf, size_t size);
uint64_t sw_pid_parse(const char *s);

#endif
