/* The process's pattern matcher (see vm_pattern.h). Written afresh from the Lua 5.1 manual's
 * pattern rules with a budget per call; split out of vm.c, which owns the state it polls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vm_pattern.h"

#include <lauxlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vm.h"

/* ---- bounded pattern matching ----------------------------------------------------------
 * string.find/match/gmatch/gsub with Lua 5.1's (and LuaJIT's) pattern semantics, written
 * afresh with a work budget: LuaJIT's matcher is C where no hook fires, so a backtracking
 * pattern (("a?"):rep(30) .. ("a"):rep(30)) would hold the thread for minutes. Every step
 * (an entry into match, a character tried by an expansion) costs one unit; a call may spend
 * PM_BUDGET_BASE + PM_BUDGET_PER_BYTE * #subject * #pattern units, then raises "pattern too
 * complex".
 * gsub's replacements spend from it too (a unit per PM_OUTPUT_PER_STEP bytes): a large
 * replacement repeated at every position could otherwise copy for seconds without a check
 * (its output is at most ~16 MB + 1 KB per subject byte). It also polls the kill flag, so a
 * kill lands inside a long match. Plain find uses memmem
 * (linear; LuaJIT's memchr+memcmp loop is quadratic on "aaa...ab" needles). */

#define PM_BUDGET_BASE     ((int64_t)1 << 20)
#define PM_BUDGET_PER_BYTE 64
#define PM_OUTPUT_PER_STEP 16 /* gsub: replacement bytes that cost one step */
#define PM_POLL_MASK       1023
#define PM_MAX_DEPTH       200 /* recursion, as LuaJIT: beyond it "pattern too complex" */
#define PM_CAP_UNFINISHED  (-1)
#define PM_CAP_POSITION    (-2)

typedef struct pm_state {
    const char *src, *src_end; /* subject */
    const char *p_end;         /* pattern end: its first '\0', as in LuaJIT */
    lua_State *L;
    sw_vm *vm;
    int64_t budget;
    int depth, level;
    struct {
        const char *init;
        ptrdiff_t len;
    } cap[LUA_MAXCAPTURES];
} pm_state;

static const char *pm_match(pm_state *ms, const char *s, const char *p);

static void pm_init(pm_state *ms, lua_State *L, const char *s, size_t ls, const char *p)
{
    ms->L = L;
    ms->vm = sw_vm_of(L);
    ms->src = s;
    ms->src_end = s + ls;
    ms->p_end = p + strlen(p);
    /* linear in subject x pattern: what LuaJIT finishes in milliseconds fits, a
     * catastrophic backtrack does not (and the kill is polled throughout) */
    int64_t plen = (int64_t)(ms->p_end - p);
    ms->budget = PM_BUDGET_BASE + PM_BUDGET_PER_BYTE * (int64_t)ls * (plen > 1 ? plen : 1);
    ms->depth = ms->level = 0;
}

/* Budget exhausted, or time to look at the kill flag. */
static void pm_check(pm_state *ms)
{
    if (ms->budget < 0) luaL_error(ms->L, "pattern too complex");
    sw_vm_poll_kill(ms->L);
}

/* One unit of work: a decrement and a test on the fast path. */
static inline void pm_step(pm_state *ms)
{
    if ((--ms->budget & PM_POLL_MASK) == 0 || ms->budget < 0) pm_check(ms);
}

static void pm_spend(pm_state *ms, int64_t units)
{
    ms->budget -= units;
    pm_check(ms);
}

/* ASCII classes of the C locale, as LuaJIT (never the process's locale): a bit table filled
 * once by prepare(), which every vm runs before any of its code. */
enum {
    PM_ALPHA = 1,
    PM_DIGIT = 2,
    PM_LOWER = 4,
    PM_UPPER = 8,
    PM_SPACE = 16,
    PM_CNTRL = 32,
    PM_PUNCT = 64,
    PM_XDIGIT = 128
};
static unsigned char pm_bits[256];

void sw_pattern_prepare(void)
{
    int c;
    for (c = 0; c < 256; c++) {
        int lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
        int digit = c >= '0' && c <= '9', graph = c > 32 && c < 127;
        pm_bits[c] =
            (unsigned char)((lower || upper ? PM_ALPHA : 0) | (digit ? PM_DIGIT : 0) |
                            (lower ? PM_LOWER : 0) | (upper ? PM_UPPER : 0) |
                            (c == ' ' || (c >= '\t' && c <= '\r') ? PM_SPACE : 0) |
                            (c < 32 || c == 127 ? PM_CNTRL : 0) |
                            (graph && !lower && !upper && !digit ? PM_PUNCT : 0) |
                            (digit || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') ? PM_XDIGIT : 0));
    }
}

static inline int pm_class(int c, int cl)
{
    int mask;
    switch (cl | 0x20) {
    case 'a': mask = PM_ALPHA; break;
    case 'c': mask = PM_CNTRL; break;
    case 'd': mask = PM_DIGIT; break;
    case 'g': mask = PM_ALPHA | PM_DIGIT | PM_PUNCT; break;
    case 'l': mask = PM_LOWER; break;
    case 'p': mask = PM_PUNCT; break;
    case 's': mask = PM_SPACE; break;
    case 'u': mask = PM_UPPER; break;
    case 'w': mask = PM_ALPHA | PM_DIGIT; break;
    case 'x': mask = PM_XDIGIT; break;
    case 'z': return (c == 0) == ((cl & 0x20) != 0);
    default: return cl == c;
    }
    /* an upper-case class letter is the complement */
    return ((pm_bits[c] & mask) != 0) == ((cl & 0x20) != 0);
}

/* Where the single-character class starting at p ends. */
static inline const char *pm_class_end(pm_state *ms, const char *p)
{
    char c = *p++;
    if (c == '%') {
        if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do { /* the first character is a member even if it is ']' */
            if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
            if (*p++ == '%' && p < ms->p_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* c against the set p[0] == '[' .. ec[0] == ']'. */
static int pm_bracket(int c, const char *p, const char *ec)
{
    int found = 1;
    if (p[1] == '^') {
        found = 0;
        p++;
    }
    while (++p < ec) {
        if (*p == '%') {
            p++;
            if (pm_class(c, (unsigned char)*p)) return found;
        } else if (p[1] == '-' && p + 2 < ec) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return found;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return found;
        }
    }
    return !found;
}

static inline int pm_single(pm_state *ms, const char *s, const char *p, const char *ep)
{
    int c;
    if (s >= ms->src_end) return 0;
    c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case '%': return pm_class(c, (unsigned char)p[1]);
    case '[': return pm_bracket(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *pm_balance(pm_state *ms, const char *s, const char *p)
{
    int open, close, depth = 1;
    if (p + 1 >= ms->p_end) luaL_error(ms->L, "unbalanced pattern");
    if (s >= ms->src_end || *s != *p) return NULL;
    open = p[0];
    close = p[1];
    while (++s < ms->src_end) {
        pm_step(ms);
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *pm_frontier(pm_state *ms, const char *s, const char *p, const char **next)
{
    int prev, cur;
    if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
    *next = pm_class_end(ms, p);
    prev = s == ms->src ? 0 : (unsigned char)s[-1];
    cur = s < ms->src_end ? (unsigned char)*s : 0;
    if (pm_bracket(prev, p, *next - 1) || !pm_bracket(cur, p, *next - 1)) return NULL;
    return s;
}

static const char *pm_backref(pm_state *ms, const char *s, int digit)
{
    int l = digit - '1';
    size_t len;
    if (l < 0 || l >= ms->level || ms->cap[l].len == PM_CAP_UNFINISHED)
        luaL_error(ms->L, "invalid capture index");
    if (ms->cap[l].len == PM_CAP_POSITION) return NULL; /* never matches, as in Lua */
    len = (size_t)ms->cap[l].len;
    pm_spend(ms, 1 + (int64_t)(len / 16));
    if ((size_t)(ms->src_end - s) >= len && memcmp(ms->cap[l].init, s, len) == 0) return s + len;
    return NULL;
}

static const char *pm_start_capture(pm_state *ms, const char *s, const char *p, ptrdiff_t what)
{
    const char *r;
    if (ms->level >= LUA_MAXCAPTURES) luaL_error(ms->L, "too many captures");
    ms->cap[ms->level].init = s;
    ms->cap[ms->level].len = what;
    ms->level++;
    if (!(r = pm_match(ms, s, p))) ms->level--;
    return r;
}

static const char *pm_end_capture(pm_state *ms, const char *s, const char *p)
{
    const char *r;
    int l = ms->level - 1;
    while (l >= 0 && ms->cap[l].len != PM_CAP_UNFINISHED) l--;
    if (l < 0) luaL_error(ms->L, "invalid pattern capture");
    ms->cap[l].len = s - ms->cap[l].init;
    if (!(r = pm_match(ms, s, p))) ms->cap[l].len = PM_CAP_UNFINISHED;
    return r;
}

static const char *pm_max_expand(pm_state *ms, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (pm_single(ms, s + i, p, ep)) {
        pm_step(ms);
        i++;
    }
    for (; i >= 0; i--) { /* longest first, then give back one at a time */
        const char *r = pm_match(ms, s + i, ep + 1);
        if (r) return r;
    }
    return NULL;
}

static const char *pm_min_expand(pm_state *ms, const char *s, const char *p, const char *ep)
{
    for (;; s++) {
        const char *r = pm_match(ms, s, ep + 1);
        if (r) return r;
        if (!pm_single(ms, s, p, ep)) return NULL;
    }
}

/* A single-character class at p, maybe quantified: match it and the rest. */
static const char *pm_item(pm_state *ms, const char *s, const char *p, const char **next)
{
    const char *ep = pm_class_end(ms, p), *r;
    int m = pm_single(ms, s, p, ep);
    *next = NULL;
    switch (ep < ms->p_end ? *ep : '\0') {
    case '?':
        if (m && (r = pm_match(ms, s + 1, ep + 1))) return r;
        *next = ep + 1;
        return s;
    case '*': return pm_max_expand(ms, s, p, ep);
    case '+': return m ? pm_max_expand(ms, s + 1, p, ep) : NULL;
    case '-': return pm_min_expand(ms, s, p, ep);
    default:
        if (!m) return NULL;
        *next = ep;
        return s + 1;
    }
}

/* Matches pattern p at s; returns the end of the match or NULL. Items that cannot
 * backtrack loop here instead of recursing (next != NULL: continue with it). */
static const char *pm_do_match(pm_state *ms, const char *s, const char *p)
{
    const char *next;
    for (;;) {
        pm_step(ms);
        if (p == ms->p_end) return s;
        switch (*p) {
        case '(':
            if (p + 1 < ms->p_end && p[1] == ')')
                return pm_start_capture(ms, s, p + 2, PM_CAP_POSITION);
            return pm_start_capture(ms, s, p + 1, PM_CAP_UNFINISHED);
        case ')': return pm_end_capture(ms, s, p + 1);
        case '$':
            if (p + 1 == ms->p_end) return s == ms->src_end ? s : NULL;
            break;
        case '%':
            if (p[1] == 'b') {
                if (!(s = pm_balance(ms, s, p + 2))) return NULL;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                if (!(s = pm_frontier(ms, s, p + 2, &next))) return NULL;
                p = next;
                continue;
            }
            if (p[1] >= '0' && p[1] <= '9') {
                if (!(s = pm_backref(ms, s, p[1]))) return NULL;
                p += 2;
                continue;
            }
            break;
        }
        s = pm_item(ms, s, p, &next);
        if (!next) return s;
        p = next;
    }
}

static const char *pm_match(pm_state *ms, const char *s, const char *p)
{
    const char *r;
    if (++ms->depth > PM_MAX_DEPTH) luaL_error(ms->L, "pattern too complex");
    r = pm_do_match(ms, s, p);
    ms->depth--;
    return r;
}

static void pm_push_capture(pm_state *ms, int i, const char *s, const char *e)
{
    ptrdiff_t l;
    if (i >= ms->level) {
        if (i != 0) luaL_error(ms->L, "invalid capture index");
        lua_pushlstring(ms->L, s, (size_t)(e - s)); /* no captures: the whole match */
        return;
    }
    l = ms->cap[i].len;
    if (l == PM_CAP_UNFINISHED) luaL_error(ms->L, "unfinished capture");
    if (l == PM_CAP_POSITION) lua_pushinteger(ms->L, ms->cap[i].init - ms->src + 1);
    else lua_pushlstring(ms->L, ms->cap[i].init, (size_t)l);
}

static int pm_push_captures(pm_state *ms, const char *s, const char *e)
{
    int n = (ms->level == 0 && s) ? 1 : ms->level, i;
    luaL_checkstack(ms->L, n, "too many captures");
    for (i = 0; i < n; i++) pm_push_capture(ms, i, s, e);
    return n;
}

static int pm_has_specials(const char *p, size_t lp)
{
    size_t i;
    for (i = 0; i < lp; i++)
        if (p[i] != '\0' && strchr("^$*+?.([%-", p[i])) return 1;
    return 0;
}

static int str_find_aux(lua_State *L, int find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    const char *s1;
    int anchor;
    pm_state ms;
    init = init < 0 ? init + (lua_Integer)ls : init - 1; /* 0-based, clamped as Lua 5.1 */
    if (init < 0) init = 0;
    if (init > (lua_Integer)ls) init = (lua_Integer)ls;
    if (find && (lua_toboolean(L, 4) || !pm_has_specials(p, lp))) {
        const char *q = lp == 1 ? memchr(s + init, p[0], ls - (size_t)init)
                                : memmem(s + init, ls - (size_t)init, p, lp);
        if (!q) {
            lua_pushnil(L);
            return 1;
        }
        lua_pushinteger(L, q - s + 1);
        lua_pushinteger(L, q - s + (lua_Integer)lp);
        return 2;
    }
    anchor = *p == '^';
    p += anchor;
    pm_init(&ms, L, s, ls, p);
    s1 = s + init;
    do {
        const char *e;
        ms.level = 0;
        if ((e = pm_match(&ms, s1, p))) {
            if (!find) return pm_push_captures(&ms, s1, e);
            lua_pushinteger(L, s1 - s + 1);
            lua_pushinteger(L, e - s);
            return pm_push_captures(&ms, NULL, NULL) + 2;
        }
    } while (s1++ < ms.src_end && !anchor);
    lua_pushnil(L);
    return 1;
}

int sw_pattern_find(lua_State *L) { return str_find_aux(L, 1); }
int sw_pattern_match(lua_State *L) { return str_find_aux(L, 0); }

static int gmatch_next(lua_State *L)
{
    size_t ls;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls);
    const char *p = lua_tostring(L, lua_upvalueindex(2));
    const char *src;
    pm_state ms;
    pm_init(&ms, L, s, ls, p);
    for (src = s + lua_tointeger(L, lua_upvalueindex(3)); src <= ms.src_end; src++) {
        const char *e;
        ms.level = 0;
        if ((e = pm_match(&ms, src, p))) {
            lua_pushinteger(L, (e - s) + (e == src)); /* an empty match moves on by one */
            lua_replace(L, lua_upvalueindex(3));
            return pm_push_captures(&ms, src, e);
        }
    }
    return 0;
}

/* '^' is not an anchor in gmatch (Lua 5.1): it matches itself. */
int sw_pattern_gmatch(lua_State *L)
{
    luaL_checkstring(L, 1);
    luaL_checkstring(L, 2);
    lua_settop(L, 2);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* Returns the bytes added. */
static size_t gsub_add_string(pm_state *ms, luaL_Buffer *b, const char *s, const char *e)
{
    size_t l, i, added = 0;
    const char *r = lua_tolstring(ms->L, 3, &l);
    for (i = 0; i < l; i++) {
        if (r[i] != '%') {
            luaL_addchar(b, r[i]);
            added++;
        } else if (++i, r[i] < '0' || r[i] > '9') {
            luaL_addchar(b, r[i]); /* "%x" is x (a trailing '%' adds the '\0' after it) */
            added++;
        } else if (r[i] == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
            added += (size_t)(e - s);
        } else {
            pm_push_capture(ms, r[i] - '1', s, e);
            added += lua_objlen(ms->L, -1);
            luaL_addvalue(b);
        }
    }
    return added;
}

/* Adds the replacement of one match; returns the bytes added. */
static size_t gsub_add_value(pm_state *ms, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = ms->L;
    size_t added;
    switch (lua_type(L, 3)) {
    case LUA_TFUNCTION:
        lua_pushvalue(L, 3);
        lua_call(L, pm_push_captures(ms, s, e), 1);
        break;
    case LUA_TTABLE:
        pm_push_capture(ms, 0, s, e);
        lua_gettable(L, 3);
        break;
    default: return gsub_add_string(ms, b, s, e);
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: keep the original text */
        lua_pop(L, 1);
        lua_pushlstring(L, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    added = lua_objlen(L, -1);
    luaL_addvalue(b);
    return added;
}

int sw_pattern_gsub(lua_State *L)
{
    size_t ls;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checkstring(L, 2);
    int tr = lua_type(L, 3), anchor = *p == '^';
    lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
    pm_state ms;
    luaL_Buffer b;
    luaL_argcheck(L,
                  tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                  3, "string/function/table expected");
    sw_vm_cstack_check(L);
    p += anchor;
    luaL_buffinit(L, &b);
    pm_init(&ms, L, src, ls, p);
    while (n < max_n) {
        const char *e;
        ms.level = 0;
        if ((e = pm_match(&ms, src, p))) {
            size_t added;
            n++;
            added = gsub_add_value(&ms, &b, src, e);
            if (added >= PM_OUTPUT_PER_STEP) pm_spend(&ms, (int64_t)(added / PM_OUTPUT_PER_STEP));
        }
        if (e && e > src) src = e;
        else if (src < ms.src_end) luaL_addchar(&b, *src++);
        else break;
        if (anchor) break;
    }
    luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
    luaL_pushresult(&b);
    lua_pushinteger(L, n);
    return 2;
}
