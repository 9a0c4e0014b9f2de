/* The routes of one http.service (docs/registry.md "http.endpoint"): every http.endpoint of
 * the http.routers that name it, as "prefix + path" patterns, and the match of a request's
 * method and path to one of them (the most literal segments win), with its parameters; or why
 * none: 404, or 405 with the methods the path allows. Built once per server start from the
 * snapshot its process runs with; pure, no I/O. Thread: any (a table is read-only once built). */
#ifndef STEWARD_HTTP_ROUTES_H
#define STEWARD_HTTP_ROUTES_H

#include <stddef.h>

#include "registry.h"

typedef struct sw_hroute {
    const sw_entry *endpoint;
    const sw_entry *func; /* its function.lua */
    /* the service id its handlers run as: the router's, if it has lifecycle.security, else the
     * http.service's */
    const char *identity;
    const sw_http_auth *auth;     /* the endpoint's, else the router's, else NULL (none) */
    struct sw_token_store *store; /* auth's store, set by the server as it starts */
    char *pattern;                /* "/api/items/{id}" */
    size_t literals;              /* segments without a parameter */
} sw_hroute;

typedef struct sw_hroutes {
    sw_hroute *v;
    size_t n;
} sw_hroutes;

/* The routes of `server` in reg. 0, or -1 (out of memory). */
int sw_hroutes_build(sw_hroutes *r, const sw_registry *reg, const sw_entry *server);
void sw_hroutes_free(sw_hroutes *r);

/* Matches method and path (no query). 200 with *out and the parameters in params
 * ("name\0value\0" each, values percent-decoded; *params_len bytes); 404; or 405 with allow
 * ("GET, POST"). A HEAD request matches a GET route. */
int sw_hroutes_match(const sw_hroutes *r, const char *method, const char *path, size_t path_len,
                     const sw_hroute **out, char *params, size_t params_cap, size_t *params_len,
                     char *allow, size_t allow_cap);

/* The byte of the percent-escape at s[i] of s[0..n) ("%2F" is '/'), or -1 when there is none
 * (then s[i] stands for itself). */
int sw_http_escape_at(const char *s, size_t i, size_t n);

#endif
