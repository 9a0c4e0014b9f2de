/* libFuzzer target for the control request parser (host/control/control_request.c): the input
 * is one request line as the transport hands it over (without its newline, at most
 * SW_CTL_MAX_LINE bytes there, any length here). sw_ctl_request_parse must never crash, leak
 * or read outside the line (libFuzzer hands over exactly `size` bytes, so ASan sees any
 * overread): it either accepts a request that holds together, or refuses with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_request.h"

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            abort();                                                                 \
        }                                                                            \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sw_ctl_request r;
    char err[256];
    err[0] = 0;
    int rc = sw_ctl_request_parse((const char *)data, size, &r, err, sizeof err);
    if (rc != 0) {
        CHECK(rc == -1, "returned %d", rc);
        CHECK(err[0] != 0 && memchr(err, 0, sizeof err), "refused without a message");
    } else {
        CHECK(size <= SW_CTL_MAX_LINE, "accepted %zu bytes", size);
        CHECK(r.cmd >= SW_CTL_STATUS && r.cmd <= SW_CTL_LOGS, "command %d", (int)r.cmd);
        bool acts = r.cmd == SW_CTL_START || r.cmd == SW_CTL_STOP || r.cmd == SW_CTL_RESTART;
        CHECK(!acts || (r.id && r.id[0]), "%s without an id", sw_ctl_cmd_name(r.cmd));
        CHECK(r.cmd != SW_CTL_RELOAD || !r.id, "reload with an id");
        CHECK(!r.all || r.cmd == SW_CTL_RELOAD, "all on %s", sw_ctl_cmd_name(r.cmd));
        CHECK(r.timeout >= 0 && r.timeout <= 86400, "timeout %g", r.timeout);
        CHECK(r.cmd == SW_CTL_LOGS || (!r.follow && r.since == 0), "logs fields on %s",
              sw_ctl_cmd_name(r.cmd));
        CHECK(r.lines <= SW_CTL_LOGS_MAX_LINES, "lines %zu", r.lines);
        CHECK(r.since >= 0, "since %g", r.since);
        CHECK(strlen(sw_ctl_cmd_name(r.cmd)) > 0, "no command name");
    }
    sw_ctl_request_free(&r);
    return 0;
}
