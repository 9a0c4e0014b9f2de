/* string.find/match/gmatch/gsub for processes: Lua 5.1 pattern semantics with a work budget
 * ("pattern too complex"), checked against LuaJIT's own on a differential corpus. LuaJIT's
 * matcher is C where no hook fires, so a backtracking pattern would hold a worker for minutes
 * and ignore kills; this one polls the kill flag as it goes. */
#ifndef STEWARD_VM_PATTERN_H
#define STEWARD_VM_PATTERN_H

#include <lua.h>

/* Fills the character-class table; once per program, before any process runs. */
void sw_pattern_prepare(void);

int sw_pattern_find(lua_State *L);
int sw_pattern_match(lua_State *L);
int sw_pattern_gmatch(lua_State *L);
int sw_pattern_gsub(lua_State *L);

/* Provided by vm_hook.c: raise now if the process is being killed (or is over its memory limit);
 * raise "C stack overflow" when nested C calls go too deep. */
void sw_vm_poll_kill(lua_State *L);
void sw_vm_cstack_check(lua_State *L);

#endif
