/* `steward schema`: a JSON Schema (draft 2020-12) of registry files, made from the kind tables
 * the loader itself validates with (registry/kinds.c), so it cannot drift from what `check`
 * accepts. The build writes it next to the binary and installs it for yaml-language-server
 * (docs/operating.md "Editor support"). The schema is looser than the loader where a field has
 * a custom reader (source, imports, security, policy conditions): it names the field and
 * leaves its checks to `steward check`. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "json.h"
#include "kinds.h"

#define REF_PATTERN "^([A-Za-z0-9_.-]+:)?[A-Za-z0-9_.-]+$"

static json_t *object_schema(const sw_schema *s, const char *const *extra);

static json_t *with_bounds(json_t *t, const sw_field *f)
{
    if (f->min < f->max) {
        json_object_set_new(t, "minimum", json_real(f->min));
        json_object_set_new(t, "maximum", json_real(f->max));
    }
    return t;
}

static json_t *enum_schema(const char *const *names)
{
    json_t *list = json_array();
    for (; *names; names++) json_array_append_new(list, json_string(*names));
    return json_pack("{s:o}", "enum", list);
}

static json_t *ref_schema(void)
{
    return json_pack("{s:s, s:s}", "type", "string", "pattern", REF_PATTERN);
}

static json_t *field_schema(const sw_field *f)
{
    switch (f->type) {
    case SW_F_STRING:
        return json_pack("{s:s, s:i}", "type", "string", "minLength",
                         (f->flags & SW_F_NONEMPTY) ? 1 : 0);
    case SW_F_BOOL: return json_pack("{s:s}", "type", "boolean");
    case SW_F_INT: return with_bounds(json_pack("{s:s}", "type", "integer"), f);
    case SW_F_NUMBER: return with_bounds(json_pack("{s:s}", "type", "number"), f);
    case SW_F_DURATION:
        return json_pack("{s:[s,s], s:s}", "type", "string", "number", "description",
                         "a duration: 250ms, 10s, 1m30s, 2h (docs/registry.md)");
    case SW_F_SIZE:
        return json_pack("{s:[s,s], s:s}", "type", "string", "integer", "description",
                         "a size: 512KB, 64MB, 1GB (docs/registry.md)");
    case SW_F_ENUM: return enum_schema(f->enums);
    case SW_F_REF: return ref_schema();
    case SW_F_REFLIST:
        return json_pack("{s:[o, {s:s, s:o}]}", "anyOf", ref_schema(), "type", "array", "items",
                         ref_schema());
    case SW_F_LIST: return json_pack("{s:s}", "type", "array");
    case SW_F_MAP: return json_pack("{s:s}", "type", "object");
    case SW_F_OBJECT: return object_schema(f->sub, NULL);
    case SW_F_CUSTOM:
        if (f->sub) return object_schema(f->sub, NULL); /* a mapping its own code parses */
        break;
    case SW_F_ANY: break;
    }
    return json_pack("{s:s}", "description", "checked by steward check (docs/registry.md)");
}

/* A mapping of s's fields (plus the names in extra, any value), nothing else. */
static json_t *object_schema(const sw_schema *s, const char *const *extra)
{
    json_t *props = json_object(), *required = json_array();
    for (size_t i = 0; s && i < s->n; i++) {
        const sw_field *f = &s->fields[i];
        json_object_set_new(props, f->name, field_schema(f));
        if (f->flags & SW_F_REQUIRED) json_array_append_new(required, json_string(f->name));
    }
    for (; extra && *extra; extra++)
        if (!json_object_get(props, *extra)) json_object_set_new(props, *extra, json_object());
    return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required",
                     required, "additionalProperties", s == NULL);
}

/* One kind as an if/then: an entry whose kind is this one has these fields. */
static json_t *kind_rule(const sw_kind_def *k)
{
    static const char *const entry_keys[] = {"name", "kind", "meta", NULL};
    return json_pack("{s:{s:{s:{s:s}}, s:[s]}, s:o}", "if", "properties", "kind", "const", k->name,
                     "required", "kind", "then", object_schema(k->schema, entry_keys));
}

static json_t *entry_schema(void)
{
    size_t n;
    const sw_kind_def *defs = sw_kind_defs(&n);
    json_t *kinds = json_array(), *rules = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(kinds, json_string(defs[i].name));
        json_array_append_new(rules, kind_rule(&defs[i]));
    }
    return json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:o}, s:{s:s}}, s:[s,s], s:o}", "type", "object",
                     "properties", "name", "type", "string", "pattern", "^[A-Za-z0-9_.-]+$", "kind",
                     "enum", kinds, "meta", "type", "object", "required", "name", "kind", "allOf",
                     rules);
}

json_t *sw_registry_json_schema(void)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:{s:{s:[s,s,i]}, s:{s:s, s:s}, s:{s:s}, s:{s:s, s:o}},"
                     " s:[s], s:b}",
                     "$schema", "https://json-schema.org/draft/2020-12/schema", "$id",
                     "https://steward.invalid/registry.schema.json", "title",
                     "Steward registry file", "type", "object", "properties", "version", "enum",
                     "1.0", "1", 1, "namespace", "type", "string", "pattern", "^[A-Za-z0-9_.-]+$",
                     "meta", "type", "object", "entries", "type", "array", "items", entry_schema(),
                     "required", "namespace", "additionalProperties", 0);
}

int sw_cmd_schema(const sw_cli *cli)
{
    (void)cli;
    json_t *schema = sw_registry_json_schema();
    char *text = sw_json_dump(schema, true, NULL);
    json_decref(schema);
    if (!text) return 1;
    fputs(text, stdout);
    free(text);
    return 0;
}
