/* The Lua source of an entry and the chunk name it is compiled under, shared by the runtime
 * (which compiles it at first spawn) and `steward check` (which compiles every source at load),
 * so an error names the same place in both. */
#include <stdio.h>

#include "entry.h"

const sw_source *sw_entry_source(const sw_entry *e)
{
    switch (e->kind) {
    case SW_KIND_PROCESS_LUA:
    case SW_KIND_FUNCTION_LUA:
    case SW_KIND_TEST_LUA: return &e->as.process_lua.source;
    case SW_KIND_LIBRARY_LUA: return &e->as.library_lua.source;
    default: return NULL;
    }
}

void sw_entry_chunkname(const sw_entry *e, char *buf, size_t size)
{
    const sw_source *src = sw_entry_source(e);
    /* Lua's conventions: "@path" for a file, "=text" shown verbatim for inline code. */
    if (src && src->path) snprintf(buf, size, "@%s", src->path);
    else snprintf(buf, size, "=%s", e->id);
}
