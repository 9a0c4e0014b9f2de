/* ${env:NAME} substitution (env_subst.h): one pass over the scalar's text into a growing
 * buffer, copied into the snapshot's arena at the end. */
#include "env_subst.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX     "${env:"
#define PREFIX_LEN 6

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) abort(); /* as the arena: a half-loaded snapshot has no useful recovery */
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

bool sw_env_name_valid(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

bool sw_env_subst_needed(const char *text, size_t len)
{
    for (const char *p = text, *end = text + len; (p = memchr(p, '$', (size_t)(end - p))); p++) {
        size_t left = (size_t)(end - p);
        if ((left >= PREFIX_LEN && memcmp(p, PREFIX, PREFIX_LEN) == 0) ||
            (left >= 3 && memcmp(p, "$${", 3) == 0))
            return true;
    }
    return false;
}

/* One reference starting at ref (at "${env:"); appends its value and returns its length in
 * the text, or 0 with err set. */
static size_t expand(buf *b, const char *ref, const char *end, char *err, size_t errlen)
{
    const char *name = ref + PREFIX_LEN;
    const char *close = memchr(name, '}', (size_t)(end - name));
    if (!close) {
        snprintf(err, errlen, "unterminated ${env:...} (no closing brace)");
        return 0;
    }
    const char *sep = name;
    while (sep < close && *sep != ':') sep++;
    size_t name_len = (size_t)(sep - name);
    bool has_default = sep < close;
    if (!sw_env_name_valid(name, name_len) || (has_default && (close - sep < 2 || sep[1] != '-'))) {
        snprintf(err, errlen,
                 "malformed %.*s (expected ${env:NAME} or ${env:NAME:-default}, NAME of letters, "
                 "digits and _)",
                 (int)(close - ref + 1), ref);
        return 0;
    }
    char key[256];
    if (name_len >= sizeof key) {
        snprintf(err, errlen, "environment variable name longer than 255 bytes");
        return 0;
    }
    memcpy(key, name, name_len);
    key[name_len] = 0;
    const char *value = getenv(key);
    if (value && *value) put(b, value, strlen(value));
    else if (has_default) put(b, sep + 2, (size_t)(close - sep - 2));
    else if (value) put(b, "", 0); /* set but empty, and no default: empty */
    else {
        snprintf(err, errlen, "environment variable %s is not set (${env:%s} has no default)", key,
                 key);
        return 0;
    }
    return (size_t)(close - ref + 1);
}

int sw_env_subst(sw_arena *a, const char *text, size_t len, const char **out, size_t *out_len,
                 char *err, size_t errlen)
{
    buf b = {0};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *d = memchr(p, '$', (size_t)(end - p));
        if (!d) d = end;
        put(&b, p, (size_t)(d - p));
        p = d;
        if (p == end) break;
        size_t left = (size_t)(end - p);
        if (left >= 3 && memcmp(p, "$${", 3) == 0) { /* escaped: a literal "${" */
            put(&b, "${", 2);
            p += 3;
        } else if (left >= PREFIX_LEN && memcmp(p, PREFIX, PREFIX_LEN) == 0) {
            size_t used = expand(&b, p, end, err, errlen);
            if (!used) {
                free(b.p);
                return -1;
            }
            p += used;
        } else {
            put(&b, p, 1);
            p++;
        }
    }
    *out_len = b.n;
    *out = sw_arena_strndup(a, b.p ? b.p : "", b.n);
    free(b.p);
    return 0;
}
