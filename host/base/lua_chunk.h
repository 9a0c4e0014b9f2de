/* The host's own Lua (the top-level lua/ folder), compiled to LuaJIT bytecode at build time
 * (`luajit -b`, see "lua/" in CMakeLists.txt) and linked into the binary; looked up by name.
 * It sits in base, the lowest wing, because it is only bytes: holding them needs no LuaJIT
 * header or library, and every wing that may load the host's Lua (vm today; lua_api or cli
 * later) sees base. Loading is the caller's business (vm_chunk.c does it for processes). */
#ifndef STEWARD_LUA_CHUNK_H
#define STEWARD_LUA_CHUNK_H

#include <stddef.h>

/* The bytecode of lua/<name>.lua (name without folder or ".lua", e.g. "coroutine") and its
 * length in *len; NULL and *len = 0 when the build has no such file. Static storage, never
 * freed. Thread: any. The bytes suit the LuaJIT the host links (the build checks that the
 * luajit tool is the same version): load them with luaL_loadbufferx(L, p, len, chunkname,
 * "b"). A chunk kept with debug info names itself "@lua/<name>.lua" whatever chunkname says;
 * a stripped one (STEWARD_LUA_STRIPPED in CMakeLists.txt) takes chunkname and has no line
 * numbers. */
const unsigned char *sw_lua_chunk(const char *name, size_t *len);

#endif
