/* Handler processes of the HTTP server (api_http_handler.c), started by its dispatch
 * (api_http_server.c). Internal to lua_api. */
#ifndef STEWARD_API_HTTP_HANDLER_H
#define STEWARD_API_HTTP_HANDLER_H

#include <stddef.h>

#include "http_routes.h"
#include "http_server.h"
#include "proc.h"

/* Starts the route's handler for the request tok names, as a child of the server's process
 * (its tree and limits), on the server's worker, with the route's identity, or running as id
 * when it is not NULL (a request's token: the handler takes its own reference). 0, or -1 with err
 * ("process limit reached", "host memory limit reached", ...): the request is not answered.
 * Thread: the server's worker. */
int sw_http_handler_start(sw_proc *server, const sw_hsrv_token *tok, const sw_hroute *route,
                          sw_sec_identity *id, const char *params, size_t params_len, char *err,
                          size_t errlen);

#endif
