/* Run-time identities in Lua (docs/security.md "Identities at run time"), shared by the
 * security, process and funcs modules: who the caller is, whether it may mint, the audit log,
 * and spawning as an identity. */
#ifndef STEWARD_API_IDENTITY_H
#define STEWARD_API_IDENTITY_H

#include <lua.h>
#include <stdbool.h>

#include "security_identity.h"

/* The calling process's context under the runtime's current set (its identity's, else its
 * service's), or NULL when it has none. Valid until the process's next check. */
const sw_sec_ctx *sw_api_caller_ctx(lua_State *L);

/* The check before minting an identity or using a token store: as security.can, so a process
 * without a context is denied in strict mode (unlike the other guarded calls). true, with the
 * deciding policy's id in *policy (may be NULL) when allowed; false after logging the denial
 * (audit) and pushing nil, "permission denied: <action> on <resource>". */
bool sw_api_may_mint(lua_State *L, const char *action, const char *resource, const char **policy);

/* One audit event at info level (msg "security denied" or "identity minted"): the caller's
 * actor and service, action, resource, the deciding policy (NULL: none), through the runtime's
 * audit limiter. subject (the minted actor's id) and scope (the policies handed out) may be
 * NULL. */
void sw_api_audit(lua_State *L, const char *msg, const char *action, const char *resource,
                  const char *policy, const char *subject, const char *scope);

/* The process.spawn family as an identity (NULL: the caller's own): arguments as process.spawn
 * from index 1; flags as api_process.c's SPAWN_MONITOR / SPAWN_LINK. */
int sw_api_spawn_as(lua_State *L, int flags, sw_sec_identity *identity);
#define SW_API_SPAWN_MONITOR 1
#define SW_API_SPAWN_LINK    2
/* funcs.call as an identity (NULL: the caller's own); arguments as funcs.call from index 1. */
int sw_api_funcs_call_as(lua_State *L, sw_sec_identity *identity);

/* process.with_context{actor =, scope =} */
int sw_api_with_context(lua_State *L);

/* security.new_actor, new_scope, named_scope, token_store: added to the security module. */
void sw_api_identity_register(lua_State *L);
/* The actor / scope userdata at idx, or NULL when it is not one. */
sw_sec_actor *sw_api_to_actor(lua_State *L, int idx);
sw_sec_scope *sw_api_to_scope(lua_State *L, int idx);

/* scope:evaluate(actor, action, resource, meta?) -> "allow" | "deny" | "undefined" */
int sw_api_scope_evaluate(lua_State *L);

/* The message codec's handler of actors and scopes (sw_msg_set_ext). */
extern const struct sw_msg_ext sw_api_identity_ext;

#endif
