/* security.policy fields: the policy block, its conditions and its groups. */
#include "policy.h"

#include <stddef.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

const char *const sw_operator_names[] = {"eq",       "ne",        "lt",      "gt",       "lte",
                                         "gte",      "in",        "nin",     "exists",   "nexists",
                                         "contains", "ncontains", "matches", "nmatches", NULL};

static const char *const effects[] = {"allow", "deny", NULL};

bool sw_pattern_valid(const char *pattern)
{
    size_t len = strlen(pattern);
    if (len == 0 || strchr(pattern, '?')) return false;
    const char *star = strchr(pattern, '*');
    return !star || star == pattern + len - 1;
}

static bool split_path(sw_arena *a, const char *rest, sw_field_path *out)
{
    size_t n = 1;
    for (const char *s = rest; *s; s++) n += *s == '.';
    out->segs = sw_arena_alloc(a, n * sizeof *out->segs);
    out->n = 0;
    const char *start = rest;
    for (const char *s = rest;; s++) {
        if (*s == '.' || *s == 0) {
            if (s == start) return false; /* empty segment: "meta..x" or a trailing dot */
            out->segs[out->n++] = sw_arena_strndup(a, start, (size_t)(s - start));
            if (!*s) break;
            start = s + 1;
        }
    }
    return true;
}

bool sw_field_path_parse(sw_arena *a, const char *text, sw_field_path *out)
{
    memset(out, 0, sizeof *out);
    out->text = text;
    if (strcmp(text, "actor.id") == 0) out->root = SW_FIELD_ACTOR_ID;
    else if (strcmp(text, "action") == 0) out->root = SW_FIELD_ACTION;
    else if (strcmp(text, "resource") == 0) out->root = SW_FIELD_RESOURCE;
    else if (strncmp(text, "actor.meta.", 11) == 0) {
        out->root = SW_FIELD_ACTOR_META;
        return split_path(a, text + 11, out);
    } else if (strncmp(text, "meta.", 5) == 0) {
        out->root = SW_FIELD_META;
        return split_path(a, text + 5, out);
    } else return false;
    return true;
}

static void parse_patterns(sw_parse *p, const sw_node *n, void *dst)
{
    sw_strlist *list = dst;
    if (!sw_read_strlist(p, n, true, list)) return;
    if (list->n == 0) {
        sw_parse_error(p, n, "must not be empty: give a pattern or a list of patterns");
        return;
    }
    for (size_t i = 0; i < list->n; i++) {
        if (sw_pattern_valid(list->v[i])) continue;
        const sw_node *at = n->type == SW_NODE_SEQ ? n->kids[i] : n;
        size_t saved = n->type == SW_NODE_SEQ ? sw_path_push_index(p, i) : p->path_len;
        sw_parse_error(p, at,
                       "invalid pattern \"%s\": \"*\" may stand alone or end a literal prefix "
                       "(\"app.data:*\"); "
                       "other \"*\" and \"?\" are not allowed",
                       list->v[i]);
        sw_path_pop(p, saved);
    }
}

static bool is_scalar_value(const sw_node *v)
{
    return v->type == SW_NODE_SCALAR && v->scalar != SW_SCALAR_NULL;
}

static void check_regex(sw_parse *p, const sw_node *v)
{
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)v->str, v->len, PCRE2_UTF, &code, &offset, NULL);
    if (re) {
        /* Policies match with PCRE2's DFA matcher (linear time, no backtracking), which cannot
         * run backreferences or backtracking verbs: refuse them here rather than at a check. */
        uint32_t backrefs = 0;
        pcre2_pattern_info(re, PCRE2_INFO_BACKREFMAX, &backrefs);
        pcre2_code_free(re);
        if (backrefs || strstr(v->str, "(*"))
            sw_parse_error(
                p, v,
                "regular expression \"%s\" uses %s, which linear-time matching does not support",
                v->str, backrefs ? "a backreference" : "a backtracking verb \"(*...)\"");
        return;
    }
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    sw_parse_error(p, v, "invalid regular expression \"%s\": %s at offset %zu", v->str,
                   (const char *)msg, (size_t)offset);
}

/* The value's shape must suit the operator; types of scalars are checked at evaluation. */
static void check_value(sw_parse *p, const sw_condition *c, const sw_node *v)
{
    switch (c->op) {
    case SW_OP_IN:
    case SW_OP_NIN:
        if (v->type != SW_NODE_SEQ) {
            sw_parse_error(p, v, "operator %s needs a list value, got %s", sw_operator_names[c->op],
                           sw_node_describe(v));
            return;
        }
        for (size_t i = 0; i < v->n; i++)
            if (!is_scalar_value(v->kids[i])) {
                sw_parse_error(p, v->kids[i],
                               "operator %s: list items must be strings, numbers or booleans",
                               sw_operator_names[c->op]);
                return;
            }
        return;
    case SW_OP_EXISTS:
    case SW_OP_NEXISTS:
        if (v->type != SW_NODE_SCALAR || v->scalar != SW_SCALAR_BOOL)
            sw_parse_error(p, v, "operator %s takes no value or true/false, got %s",
                           sw_operator_names[c->op], sw_node_describe(v));
        return;
    case SW_OP_MATCHES:
    case SW_OP_NMATCHES:
        if (!sw_node_is_string(v))
            sw_parse_error(p, v, "operator %s needs a regular expression string, got %s",
                           sw_operator_names[c->op], sw_node_describe(v));
        else check_regex(p, v);
        return;
    default:
        if (!is_scalar_value(v))
            sw_parse_error(p, v, "operator %s needs a string, number or boolean value, got %s",
                           sw_operator_names[c->op], sw_node_describe(v));
        return;
    }
}

static void parse_field_path(sw_parse *p, const sw_node *n, void *dst)
{
    const char *text;
    if (!sw_read_string(p, n, &text)) return;
    if (!sw_field_path_parse(p->arena, text, dst))
        sw_parse_error(p, n,
                       "unknown field \"%s\": use actor.id, actor.meta.<path>, action, resource or "
                       "meta.<path>",
                       text);
}

static void parse_value_from(sw_parse *p, const sw_node *n, void *dst)
{
    sw_condition *c = (sw_condition *)((char *)dst - offsetof(sw_condition, value_from));
    c->has_value_from = true;
    parse_field_path(p, n, dst);
}

static const sw_field condition_fields[] = {
    {.name = "field",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_condition, field),
     .flags = SW_F_REQUIRED,
     .custom = parse_field_path},
    {.name = "operator",
     .type = SW_F_ENUM,
     .offset = offsetof(sw_condition, op),
     .flags = SW_F_REQUIRED,
     .enums = sw_operator_names},
    {.name = "value", .type = SW_F_ANY, .offset = offsetof(sw_condition, value)},
    {.name = "value_from",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_condition, value_from),
     .custom = parse_value_from},
};
static const sw_schema condition_schema = {condition_fields,
                                           sizeof condition_fields / sizeof *condition_fields};

static void parse_condition(sw_parse *p, const sw_node *n, sw_condition *c)
{
    if (n->type != SW_NODE_MAP) {
        sw_parse_error(p, n, "expected a condition mapping {field, operator, value}, got %s",
                       sw_node_describe(n));
        return;
    }
    c->op = -1;
    bool was_ok = p->ok;
    p->ok = true;
    sw_schema_parse(p, &condition_schema, n, c, NULL);
    bool parsed = p->ok;
    p->ok = was_ok && parsed;
    if (!parsed || c->op < 0) return;
    bool optional_value = c->op == SW_OP_EXISTS || c->op == SW_OP_NEXISTS;
    if (c->value && c->has_value_from)
        sw_parse_error(p, n, "give exactly one of value and value_from, not both");
    else if (!c->value && !c->has_value_from && !optional_value)
        sw_parse_error(p, n, "operator %s needs value or value_from", sw_operator_names[c->op]);
    else if (c->has_value_from && (c->op == SW_OP_MATCHES || c->op == SW_OP_NMATCHES))
        sw_parse_error(
            p, n, "operator %s needs a regular expression in value (value_from is not allowed)",
            sw_operator_names[c->op]);
    else if (c->value) {
        size_t saved = sw_path_push(p, "value");
        check_value(p, c, c->value);
        sw_path_pop(p, saved);
    }
}

static void parse_conditions(sw_parse *p, const sw_node *n, void *dst)
{
    sw_policy *pol = (sw_policy *)((char *)dst - offsetof(sw_policy, conditions));
    if (n->type != SW_NODE_SEQ) {
        sw_parse_error(p, n, "expected a list of conditions, got %s", sw_node_describe(n));
        return;
    }
    pol->n_conditions = n->n;
    pol->conditions = sw_arena_alloc(p->arena, (n->n ? n->n : 1) * sizeof *pol->conditions);
    for (size_t i = 0; i < n->n; i++) {
        size_t saved = sw_path_push_index(p, i);
        parse_condition(p, n->kids[i], &pol->conditions[i]);
        sw_path_pop(p, saved);
    }
}

static void parse_groups(sw_parse *p, const sw_node *n, void *dst)
{
    sw_strlist *groups = dst;
    if (!sw_read_strlist(p, n, false, groups)) return;
    for (size_t i = 0; i < groups->n; i++) {
        const char *g = sw_qualify(p, groups->v[i]);
        if (!sw_valid_id(g)) {
            size_t saved = sw_path_push_index(p, i);
            sw_parse_error(p, n->kids[i], "\"%s\" is not a valid group name", groups->v[i]);
            sw_path_pop(p, saved);
        }
        groups->v[i] = g;
    }
}

static const sw_field policy_fields[] = {
    {.name = "actions",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_policy, actions),
     .flags = SW_F_REQUIRED,
     .custom = parse_patterns},
    {.name = "resources",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_policy, resources),
     .flags = SW_F_REQUIRED,
     .custom = parse_patterns},
    {.name = "effect",
     .type = SW_F_ENUM,
     .offset = offsetof(sw_policy, effect),
     .flags = SW_F_REQUIRED,
     .enums = effects},
    {.name = "conditions",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_policy, conditions),
     .custom = parse_conditions},
};
static const sw_schema policy_schema = {policy_fields,
                                        sizeof policy_fields / sizeof *policy_fields};

static const sw_field policy_entry_fields[] = {
    {.name = "policy",
     .type = SW_F_OBJECT,
     .offset = 0,
     .flags = SW_F_REQUIRED,
     .sub = &policy_schema},
    {.name = "groups",
     .type = SW_F_CUSTOM,
     .offset = offsetof(sw_policy, groups),
     .custom = parse_groups},
};
const sw_schema sw_policy_entry_schema = {policy_entry_fields,
                                          sizeof policy_entry_fields / sizeof *policy_entry_fields};
