/* Routes of an http.service (see http_routes.h): built from the snapshot's routers and
 * endpoints, matched segment by segment without copying the path. */
#include "http_routes.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *join(const char *prefix, const char *path)
{
    bool root = strcmp(prefix, "/") == 0;
    size_t n = strlen(prefix) + strlen(path) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", root ? "" : prefix, !root && strcmp(path, "/") == 0 ? "" : path);
    if (s && !*s) s[0] = '/', s[1] = 0; /* "/" + "/" with a root prefix */
    return s;
}

static size_t count_literals(const char *pattern)
{
    size_t n = 0;
    for (const char *s = pattern; *s; s++)
        if (*s == '/' && s[1] != '{') n++;
    return n;
}

int sw_hroutes_build(sw_hroutes *r, const sw_registry *reg, const sw_entry *server)
{
    r->v = NULL;
    r->n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < reg->n_entries; i++) {
        const sw_entry *e = reg->entries[i];
        if (e->kind != SW_KIND_HTTP_ENDPOINT) continue;
        const sw_entry *router = e->as.http_endpoint.router.target;
        if (!router || router->as.http_router.server.target != server) continue;
        if (r->n == cap) {
            cap = cap ? cap * 2 : 8;
            sw_hroute *v = realloc(r->v, cap * sizeof *v);
            if (!v) return -1;
            r->v = v;
        }
        sw_hroute *rt = &r->v[r->n];
        rt->pattern = join(router->as.http_router.prefix, e->as.http_endpoint.path);
        if (!rt->pattern) return -1;
        rt->endpoint = e;
        rt->func = e->as.http_endpoint.func.target;
        rt->identity = router->as.http_router.lifecycle.security.present ? router->id : server->id;
        rt->literals = count_literals(rt->pattern);
        rt->auth = e->as.http_endpoint.auth.present      ? &e->as.http_endpoint.auth
                   : router->as.http_router.auth.present ? &router->as.http_router.auth
                                                         : NULL;
        rt->store = NULL;
        r->n++;
    }
    return 0;
}

void sw_hroutes_free(sw_hroutes *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->v[i].pattern);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int sw_http_escape_at(const char *s, size_t i, size_t n)
{
    if (s[i] != '%' || i + 2 >= n) return -1;
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* Appends name\0 and the percent-decoded value\0; false when out of room. */
static bool add_param(char *out, size_t cap, size_t *len, const char *name, size_t nlen,
                      const char *v, size_t vlen)
{
    if (*len + nlen + vlen + 2 > cap) return false;
    memcpy(out + *len, name, nlen);
    *len += nlen;
    out[(*len)++] = 0;
    for (size_t i = 0; i < vlen; i++) {
        int c = sw_http_escape_at(v, i, vlen);
        out[(*len)++] = c < 0 ? v[i] : (char)c;
        if (c >= 0) i += 2;
    }
    out[(*len)++] = 0;
    return true;
}

/* Whether path matches pattern; its parameters go to out. */
static bool match_path(const char *pat, const char *path, size_t plen, char *out, size_t cap,
                       size_t *len)
{
    const char *end = path + plen;
    *len = 0;
    while (*pat && path < end) {
        if (*pat != '/' || *path != '/') return false;
        pat++, path++;
        const char *pseg_end = strchr(pat, '/');
        size_t pn = pseg_end ? (size_t)(pseg_end - pat) : strlen(pat);
        const char *seg_end = memchr(path, '/', (size_t)(end - path));
        size_t sn = seg_end ? (size_t)(seg_end - path) : (size_t)(end - path);
        if (pn >= 2 && pat[0] == '{') {
            bool rest = pn > 5 && memcmp(pat + pn - 4, "...}", 4) == 0;
            size_t name_len = pn - 2 - (rest ? 3 : 0);
            size_t vn = rest ? (size_t)(end - path) : sn;
            if (!rest && vn == 0) return false;
            if (!add_param(out, cap, len, pat + 1, name_len, path, vn)) return false;
            if (rest) return true;
        } else if (pn != sn || memcmp(pat, path, pn) != 0) {
            return false;
        }
        pat += pn;
        path += sn;
    }
    return !*pat && path == end;
}

static void allow_add(char *allow, size_t cap, const char *method)
{
    size_t n = strlen(allow), m = strlen(method);
    for (const char *s = allow; (s = strstr(s, method)); s += m)
        if ((s == allow || s[-1] == ' ') && (s[m] == ',' || !s[m])) return;
    if (n + m + 3 > cap) return;
    snprintf(allow + n, cap - n, "%s%s", n ? ", " : "", method);
}

int sw_hroutes_match(const sw_hroutes *r, const char *method, const char *path, size_t path_len,
                     const sw_hroute **out, char *params, size_t params_cap, size_t *params_len,
                     char *allow, size_t allow_cap)
{
    const sw_hroute *best = NULL;
    char scratch[1024];
    size_t slen = 0;
    bool head = strcmp(method, "HEAD") == 0;
    allow[0] = 0;
    for (size_t i = 0; i < r->n; i++) {
        const sw_hroute *rt = &r->v[i];
        if (!match_path(rt->pattern, path, path_len, scratch, sizeof scratch, &slen)) continue;
        const char *m = rt->endpoint->as.http_endpoint.method;
        allow_add(allow, allow_cap, m);
        bool same = strcmp(m, method) == 0 || (head && strcmp(m, "GET") == 0);
        if (!same || (best && best->literals >= rt->literals)) continue;
        best = rt;
        if (slen > params_cap) slen = 0;
        memcpy(params, scratch, slen);
        *params_len = slen;
    }
    *out = best;
    return best ? 200 : allow[0] ? 405 : 404;
}
