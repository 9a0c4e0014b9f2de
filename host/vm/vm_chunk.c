/* Code into a process: Lua source compiled in the state (sw_vm_load), source compiled to
 * bytecode once for the host's code cache (sw_vm_compile) and that bytecode loaded per
 * process (sw_vm_load_compiled), and the host's own Lua (lua/<name>.lua) compiled at build
 * time and looked up with sw_lua_chunk (vm_load_shipped). Process code only ever gets text
 * in: its load and loadstring (vm_sandbox.c) refuse binary chunks. */
#include "vm_internal.h"
#include "lua_chunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

int sw_vm_load(sw_vm *vm, const char *chunkname, const char *src, size_t len, char *err,
               size_t errlen)
{
    int rc;
    const char *msg;
    if (len > 0 && src[0] == '\033') {
        snprintf(err, errlen, "%s: binary chunks are not allowed", chunkname);
        return -1;
    }
    rc = luaL_loadbufferx(vm->L, src, len, chunkname, "t");
    if (rc == 0) return 0;
    msg = vm->oom || rc == LUA_ERRMEM ? vm_oom_text(vm) : lua_tostring(vm->L, -1);
    snprintf(err, errlen, "%s", msg ? msg : "cannot load chunk");
    lua_pop(vm->L, 1);
    return -1;
}

typedef struct bc_buf {
    unsigned char *data;
    size_t len, cap;
} bc_buf;

static int bc_append(lua_State *L, const void *p, size_t sz, void *ud)
{
    bc_buf *b = ud;
    (void)L;
    if (b->len + sz > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + sz) cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d) return 1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, sz);
    b->len += sz;
    return 0;
}

int sw_vm_compile(const char *chunkname, const char *src, size_t len, unsigned char **out,
                  size_t *out_len, char *err, size_t errlen)
{
    lua_State *L = luaL_newstate();
    bc_buf b = {0};
    int rc = -1;
    if (!L) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (len > 0 && src[0] == '\033')
        snprintf(err, errlen, "%s: binary chunks are not allowed", chunkname);
    else if (luaL_loadbufferx(L, src, len, chunkname, "t") != 0)
        snprintf(err, errlen, "%s", lua_tostring(L, -1));
    else if (lua_dump(L, bc_append, &b) != 0 || !b.data) snprintf(err, errlen, "out of memory");
    else rc = 0;
    lua_close(L);
    if (rc != 0) {
        free(b.data);
        return -1;
    }
    *out = b.data;
    *out_len = b.len;
    return 0;
}

int sw_vm_load_compiled(sw_vm *vm, const char *chunkname, const unsigned char *bc, size_t len,
                        char *err, size_t errlen)
{
    int rc = luaL_loadbufferx(vm->L, (const char *)bc, len, chunkname, "b");
    if (rc == 0) return 0;
    const char *msg = vm->oom || rc == LUA_ERRMEM ? vm_oom_text(vm) : lua_tostring(vm->L, -1);
    snprintf(err, errlen, "%s", msg ? msg : "cannot load chunk");
    lua_pop(vm->L, 1);
    return -1;
}

void vm_load_shipped(lua_State *L, const char *name, const char *chunkname)
{
    size_t len = 0;
    const unsigned char *bc = sw_lua_chunk(name, &len);
    if (!bc) luaL_error(L, "no lua/%s.lua in this build", name);
    if (luaL_loadbufferx(L, (const char *)bc, len, chunkname, "b") != 0) lua_error(L);
}
