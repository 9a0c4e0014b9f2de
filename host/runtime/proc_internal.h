/* What proc.c (spawn, run) and proc_exit.c (the end) share. Thread: the worker running p. */
#ifndef STEWARD_PROC_INTERNAL_H
#define STEWARD_PROC_INTERNAL_H

#include "proc.h"

/* The process failed (an error, a kill, a limit): the raw error value, if any, is at the top
 * of co (may be NULL). Ends it: proc_exit.c. */
void proc_exit_failed(sw_proc *p, lua_State *co, const char *msg, sw_exit_kind kind);
/* Its main returned, with its results on co. Ends it. */
void proc_exit_returned(sw_proc *p, lua_State *co);
/* Frees everything the process holds but the struct itself (tasks, sockets, transfers, its
 * state, its lists), and takes it out of the process counts. */
void proc_free_state(sw_proc *p);

#endif
