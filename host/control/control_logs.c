/* The logs request and its followers (see control_logs.h). */
#include "control_logs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_format.h"

int sw_ctl_logs_read(sw_log_ring *ring, const sw_ctl_request *req, char **text, size_t *len,
                     sw_ctl_follow **follow)
{
    *follow = NULL;
    sw_ctl_follow *f = req->follow ? calloc(1, sizeof *f) : NULL;
    if (req->follow && (!f || (req->id && !(f->service = strdup(req->id))))) {
        sw_ctl_follow_free(NULL, f);
        return -1;
    }
    int64_t since = req->since > 0 ? sw_log_wall_ns() - (int64_t)(req->since * 1e9) : 0;
    sw_log_query q = {
        .service = req->id, .lines = req->lines, .since_ns = since, .follow = f != NULL};
    char *lines;
    size_t n_bytes, count;
    uint64_t seq;
    if (sw_log_ring_read(ring, &q, &lines, &n_bytes, &count, &seq) != 0) {
        sw_ctl_follow_free(NULL, f);
        return -1;
    }
    char head[64];
    int h = snprintf(head, sizeof head, "{\"ok\":true,\"lines\":%zu}\n", count);
    *text = malloc((size_t)h + n_bytes);
    if (!*text) {
        free(lines);
        sw_ctl_follow_free(ring, f);
        return -1;
    }
    memcpy(*text, head, (size_t)h);
    if (n_bytes) memcpy(*text + h, lines, n_bytes);
    *len = (size_t)h + n_bytes;
    free(lines);
    if (f) f->after = seq;
    *follow = f;
    return 0;
}

static bool wanted(const sw_ctl_follow *f, const sw_log_rec *rec)
{
    if (rec->seq <= f->after) return false;
    return !f->service || (rec->service && strcmp(rec->service, f->service) == 0);
}

/* The drop marker: a warn record of the host's, as JSON, into b. */
static void marker(lbuf *b, uint64_t dropped)
{
    char msg[64];
    snprintf(msg, sizeof msg, "%llu lines dropped", (unsigned long long)dropped);
    sw_log_field fd = {.key = "dropped", .type = SW_LF_INT, .i = (int64_t)dropped};
    sw_log_style st = {.json = true, .wall_ns = sw_log_wall_ns()};
    sw_log_format(b, &st, SW_LOG_WARN, NULL, msg, &fd, 1);
}

void sw_ctl_follow_batch(sw_ctl_follow *f, const sw_log_rec *list, uint64_t lost_too, size_t room,
                         char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    f->dropped += lost_too;
    sw_log_lines out = {0};
    if (f->dropped) { /* the marker first, when it fits */
        lbuf m;
        marker(&m, f->dropped);
        if (m.len && sw_log_lines_add(&out, m.p, m.len, room)) f->dropped = 0;
        sw_log_line_free(&m);
    }
    for (const sw_log_rec *r = list; r; r = r->feed_next) {
        if (!wanted(f, r)) continue;
        f->after = r->seq;
        lbuf b;
        sw_log_rec_json(r, &b);
        if (!b.len || !sw_log_lines_add(&out, b.p, b.len, room)) f->dropped++;
        sw_log_line_free(&b);
    }
    *text = out.p;
    *len = out.len;
}

void sw_ctl_follow_free(sw_log_ring *ring, sw_ctl_follow *f)
{
    if (!f) return;
    if (ring) sw_log_ring_unfollow(ring);
    free(f->service);
    free(f);
}
