/* Authenticated endpoints (see http_auth.h): the header named by the route's auth, its scheme
 * ("Bearer <token>", or the whole value when the scheme is ""), then one sw_token_validate. */
#include "http_auth.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "log_writer.h"
#include "security_token.h"

/* The first value of header `name` (any case), or NULL. */
static const char *header_value(const sw_hsrv_request *r, const char *name)
{
    const char *p = r->header;
    for (size_t i = 0; i < r->n_headers; i++) {
        const char *v = p + strlen(p) + 1;
        if (strcasecmp(p, name) == 0) return v;
        p = v + strlen(v) + 1;
    }
    return NULL;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

/* v without its scheme and surrounding blanks; false when v does not start with scheme (its
 * case aside) and a blank. */
static bool strip_scheme(const char *v, const char *scheme, const char **tok, size_t *len)
{
    size_t sl = strlen(scheme);
    if (sl && (strncasecmp(v, scheme, sl) != 0 || !blank(v[sl]))) return false;
    v += sl;
    while (blank(*v)) v++;
    size_t n = strlen(v);
    while (n && blank(v[n - 1])) n--;
    *tok = v;
    *len = n;
    return n > 0;
}

sw_hauth sw_http_authenticate(const sw_hroute *route, const sw_hsrv_request *req,
                              sw_sec_identity **id)
{
    *id = NULL;
    const sw_http_auth *a = route->auth;
    if (!a) return SW_HAUTH_NONE;
    const char *v = header_value(req, a->header);
    while (v && blank(*v)) v++;
    if (!v || !*v) return a->required ? SW_HAUTH_MISSING : SW_HAUTH_NONE;
    const char *tok;
    size_t len;
    if (!route->store || !strip_scheme(v, a->scheme, &tok, &len)) return SW_HAUTH_INVALID;
    *id = sw_token_validate(route->store, tok, len);
    return *id ? SW_HAUTH_OK : SW_HAUTH_INVALID;
}

size_t sw_http_auth_challenge(const sw_hroute *route, sw_hauth r, char *head, size_t cap)
{
    const char *scheme = route->auth && *route->auth->scheme ? route->auth->scheme : "Bearer";
    int n = snprintf(head, cap, "www-authenticate: %s%s\r\n", scheme,
                     r == SW_HAUTH_INVALID ? " error=\"invalid_token\"" : "");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

void sw_http_auth_audit(sw_runtime *rt, const char *service, const sw_hroute *route,
                        const sw_hsrv_request *req)
{
    if (!sw_log_enabled(rt->log, SW_LOG_INFO)) return;
    const char *store = route->auth->token_store.id, *endpoint = route->endpoint->id;
    char client[64]; /* the address without its port: one client's storm is one kind */
    snprintf(client, sizeof client, "%s", req->remote);
    char *colon = strrchr(client, ':');
    if (colon && colon > client + 5) *colon = 0;
    uint64_t suppressed = 0;
    if (rt->audit && !sw_audit_admit(rt->audit, sw_log_clock_ns(), "token rejected", client,
                                     endpoint, store, &suppressed))
        return;
    sw_log_field f[5] = {
        {.key = "action", .type = SW_LF_STR, .s = "security.token.validate"},
        {.key = "resource", .type = SW_LF_STR, .s = store},
        {.key = "endpoint", .type = SW_LF_STR, .s = endpoint},
        {.key = "remote", .type = SW_LF_STR, .s = req->remote},
        {.key = "suppressed", .type = SW_LF_INT, .i = (int64_t)suppressed},
    };
    sw_log_write(rt->log, SW_LOG_INFO, service, "token rejected", f, suppressed ? 5 : 4);
}
