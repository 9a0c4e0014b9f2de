/* Token stores (docs/security.md "Tokens"): opaque random tokens that stand for an identity
 * (an actor and a scope), each store one security.token_store entry, host-wide and shared by
 * every process and worker thread. No Lua: a caller in C (an HTTP endpoint authenticating a
 * request) validates a token with sw_token_validate alone.
 *
 * A token is SW_TOKEN_BYTES bytes from the OS, written as base64url (SW_TOKEN_LEN characters).
 * The store keeps its bytes under a keyed hash (SipHash-2-4 with a per-store random key, so
 * nobody can aim tokens at one bucket) and compares the full bytes in constant time. An
 * expired token is removed when it is next looked at or when room is needed. */
#ifndef STEWARD_SECURITY_TOKEN_H
#define STEWARD_SECURITY_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "security_identity.h"

#define SW_TOKEN_BYTES 24 /* 192 bits */
#define SW_TOKEN_LEN   32 /* base64url characters, no padding */

typedef struct sw_token_store sw_token_store;
typedef struct sw_token_stores sw_token_stores; /* the host's stores, by entry id */

sw_token_stores *sw_token_stores_new(void);
/* Frees every store and the identities their tokens hold. No other thread may use them. */
void sw_token_stores_free(sw_token_stores *all);

/* The store of a security.token_store entry, made on first use and kept as long as `all`
 * (tokens survive a reload). Its ttl and max_tokens follow the entry given (a reload's new
 * values apply from the next call). Thread: any. */
sw_token_store *sw_token_store_of(sw_token_stores *all, const sw_entry *e);

/* A new token for id (retained by the store) valid for ttl_ns (<= 0: the store's ttl).
 * 0 with the token (NUL-terminated) in out; -1 with err: "token store full" (max_tokens live
 * tokens, after removing the expired ones) or "no random source". Thread: any. */
int sw_token_create(sw_token_store *ts, sw_sec_identity *id, int64_t ttl_ns,
                    char out[SW_TOKEN_LEN + 1], char *err, size_t errlen);
/* The identity of a live token, retained for the caller (release it with
 * sw_sec_identity_release); NULL when the token is unknown, expired, revoked or malformed
 * (one answer for all). Thread: any; one lock held for a hash lookup. */
sw_sec_identity *sw_token_validate(sw_token_store *ts, const char *token, size_t len);
/* Makes a token invalid at once. true when it was live. Thread: any. */
bool sw_token_revoke(sw_token_store *ts, const char *token, size_t len);
/* Live tokens (expired ones not yet removed included). */
size_t sw_token_count(sw_token_store *ts);

#endif
