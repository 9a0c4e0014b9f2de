/* What the identity files share, and nothing else includes: api_identity.c (actors, scopes,
 * process.with_context; the definitions below), api_token_store.c (security.token_store) and
 * api_identity_codec.c (actors and scopes in messages). */
#ifndef STEWARD_API_IDENTITY_INTERNAL_H
#define STEWARD_API_IDENTITY_INTERNAL_H

#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>

#include "api_identity.h"
#include "security.h"

#define SCOPE_MAX 1024 /* policies in one scope */
#define ID_MAX    256  /* actor, policy, group and store ids: bytes */

/* The registry keys of the actor and scope metatables (sw_api_push_metatable). */
extern const char identity_actor_mt_key, identity_scope_mt_key;

typedef struct actor_ud {
    sw_sec_actor *a;
} actor_ud;
typedef struct scope_ud {
    sw_sec_scope *s;
} scope_ud;

/* A string argument for an id: no NUL, 1..ID_MAX-1 bytes; raises otherwise. */
const char *identity_check_id(lua_State *L, int idx, size_t *len);
/* id in the caller's namespace when it has no colon, as process.spawn does. */
const char *identity_qualify(lua_State *L, const char *id, char *buf, size_t size);

/* An actor of id with the meta table at idx (or none); NULL with *err when meta is not one. */
sw_sec_actor *identity_make_actor(lua_State *L, const char *id, size_t len, int meta_idx,
                                  const char **err);
/* Pushes an actor value taking over the caller's reference to a. */
void identity_push_actor(lua_State *L, sw_sec_actor *a);
/* Pushes a scope value taking over the caller's reference to s. */
void identity_push_scope(lua_State *L, sw_sec_scope *s);
/* The actor / scope argument at idx; raises a type error when it is not one. */
sw_sec_actor *identity_check_actor(lua_State *L, int idx);
sw_sec_scope *identity_check_scope(lua_State *L, int idx);

/* What the audit names a scope by: its group, else its policy ids. */
const char *identity_scope_list(const sw_sec_scope *s, char *buf, size_t size);
/* The runtime's current policy set, retained (sw_security_release it). */
sw_security_set *identity_current_set(lua_State *L);

/* Fills the new metatable on top of L: methods as __index, gc, tostring (may be NULL), and a
 * hidden __metatable. */
void identity_methods_mt(lua_State *L, const luaL_Reg *methods, lua_CFunction gc,
                         lua_CFunction tostring);

/* security.token_store(id) -> store | nil, err (api_token_store.c) */
int identity_token_store(lua_State *L);

#endif
