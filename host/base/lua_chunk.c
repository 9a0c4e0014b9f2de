/* The index of the host's compiled Lua (lua_chunk.h). CMake generates lua_chunks.inc: one
 * #include per lua/<name>.lua (lua_bc_<name>.h, made by `luajit -b -n <name>`: the array
 * luaJIT_BC_<name> and its size luaJIT_BC_<name>_SIZE) and the list SW_LUA_CHUNKS of names.
 * The table and the lookup are here. */
#include "lua_chunk.h"

#include <string.h>

#include "lua_chunks.inc"

typedef struct chunk {
    const char *name;
    const unsigned char *bytes;
    size_t len;
} chunk;

#define SW_LUA_CHUNK(n) {#n, luaJIT_BC_##n, luaJIT_BC_##n##_SIZE},
static const chunk chunks[] = {SW_LUA_CHUNKS{NULL, NULL, 0}};
#undef SW_LUA_CHUNK

/* A handful of chunks, looked up once per process at most: a linear scan is enough. */
const unsigned char *sw_lua_chunk(const char *name, size_t *len)
{
    const chunk *c;
    for (c = chunks; c->name; c++) {
        if (strcmp(c->name, name) == 0) {
            *len = c->len;
            return c->bytes;
        }
    }
    *len = 0;
    return NULL;
}
