/* Authenticated endpoints (docs/security.md "Authenticated endpoints"): the token a request
 * carries in its route's `auth` header, looked up in the route's token store in C on the
 * server's worker, before any Lua runs; the 401's challenge; and the audit event of a token
 * refused. No Lua, no I/O but the log. Thread: the server's worker. */
#ifndef STEWARD_HTTP_AUTH_H
#define STEWARD_HTTP_AUTH_H

#include <stddef.h>

#include "http_routes.h"
#include "http_server.h"
#include "runtime.h"
#include "security_identity.h"

typedef enum sw_hauth {
    SW_HAUTH_NONE,    /* no auth, or no token where none is required: run as the router */
    SW_HAUTH_OK,      /* a live token: run as its identity */
    SW_HAUTH_MISSING, /* no token where one is required: 401 */
    SW_HAUTH_INVALID, /* a token unknown, expired, revoked, malformed or of another scheme: 401 */
} sw_hauth;

/* What route's auth makes of req. SW_HAUTH_OK with *id the token's identity, retained for the
 * caller (who releases it); else *id is NULL. */
sw_hauth sw_http_authenticate(const sw_hroute *route, const sw_hsrv_request *req,
                              sw_sec_identity **id);

/* The 401's header lines for a MISSING or INVALID result ("www-authenticate: Bearer\r\n", with
 * error="invalid_token" for an INVALID one), written to head. Its length. */
size_t sw_http_auth_challenge(const sw_hroute *route, sw_hauth r, char *head, size_t cap);

/* One audit event (info, "token rejected") for an INVALID result, held back by the runtime's
 * audit limiter like any audit event (alike: same endpoint, store and client address). */
void sw_http_auth_audit(sw_runtime *rt, const char *service, const sw_hroute *route,
                        const sw_hsrv_request *req);

#endif
