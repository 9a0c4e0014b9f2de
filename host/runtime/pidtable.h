/* Process ids and registered names. A pid is a 64-bit number, shown to Lua as "host|0x0001";
 * the table maps live pids to their process with a reference taken under its lock, so no
 * thread ever holds a raw pointer to a process that may be freed. Thread-safe. */
#ifndef STEWARD_PIDTABLE_H
#define STEWARD_PIDTABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_proc sw_proc;

typedef struct sw_pidtable {
    pthread_mutex_t lock;
    uint64_t next_id;
    /* id -> proc, open addressing; slots with proc NULL and id != 0 are tombstones */
    struct pid_slot {
        uint64_t id;
        sw_proc *proc;
    } * slots;
    size_t cap, used, live;
    /* name -> pid; owner: the pid that registered it (its count of names is sw_proc.names_owned).
     * id 0: released (a tombstone until the table grows). */
    struct name_slot {
        char *name;
        uint64_t id, owner;
    } * names;
    size_t names_cap, names_used;
    uint64_t deaths; /* sw_pidtable_remove calls so far: a sweep for stale names is
                                    pointless when nobody ended since the last one */
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
/* Grabs (with a reference each, to release) up to max live processes for which match(p, arg)
 * is true, walking the table under its lock; match must not take locks. Returns how many. */
size_t sw_pidtable_grab_matching(sw_pidtable *t, bool (*match)(const sw_proc *p, void *arg),
                                 void *arg, sw_proc **out, size_t max);

/* What register and unregister return. */
enum {
    SW_NAME_OK = 0,
    SW_NAME_TAKEN = -1,      /* register: the name names another live process */
    SW_NAME_NO_PROCESS = -2, /* register: id is not alive (as Erlang: a name must name someone) */
    SW_NAME_TOO_MANY = -3,   /* register: owner has max_owned names already */
    SW_NAME_NOT_HELD = -4,   /* unregister: the name is held, but not by the caller */
    SW_NAME_UNKNOWN = -5,    /* unregister: not held at all (never registered, unregistered, or
                                  its process ended) */
};

/* Names `name` id, registered by owner (a live pid, or 0 for the host: nothing counted).
 * Registering a name to the process it names already is SW_NAME_OK (nothing changes). A name
 * whose process ended is free. The names an owner registered count against max_owned (0: no
 * bound) until unregistered, taken over after their process ended, or swept: at the bound,
 * names of ended processes are released first (only if some process ended since the last
 * sweep, so a full owner costs one scan per death, not one per call). */
int sw_pidtable_register(sw_pidtable *t, const char *name, uint64_t id, uint64_t owner,
                         size_t max_owned);
/* The id a name names, or 0. */
uint64_t sw_pidtable_lookup(sw_pidtable *t, const char *name);
/* Releases name if caller holds it: caller registered it, or is the process it names (caller
 * 0: the host, anyone's). SW_NAME_OK, SW_NAME_NOT_HELD or SW_NAME_UNKNOWN. */
int sw_pidtable_unregister(sw_pidtable *t, const char *name, uint64_t caller);

/* "host|0x0001" <-> id. format writes at most size bytes; parse returns 0 if malformed. */
void sw_pid_format(uint64_t id, char *buf, size_t size);
uint64_t sw_pid_parse(const char *s);

#endif
