-- The registry and its reference cannot drift apart (docs/registry.md "Kinds and their
-- fields"): every field of every kind, as the loader's own tables describe it (`steward
-- schema`), is named in that kind's section (or, for lifecycle.*, in "lifecycle"), and every
-- field row of those sections is a field the loader accepts. The Lua API's side of the same
-- rule is spec/c/test_api_docs.c.
local h = require("spec.lua.steward_helper")
local json = require("dkjson")

local DOC = h.read("docs/registry.md")

-- The text of the "### name" section, up to the next heading.
local function section(name)
  local start = DOC:find("\n### " .. name .. "\n", 1, true)
  assert.truthy(start, "docs/registry.md has no section ### " .. name)
  local body = DOC:sub(start + #name + 6)
  return body:sub(1, (body:find("\n#", 1, true) or #body + 1) - 1)
end

-- Field paths of an object schema: name, and name.sub for the fields of its objects.
local function paths(schema, prefix, out)
  out = out or {}
  for name, sub in pairs(schema.properties or {}) do
    local path = prefix .. name
    out[path] = true
    if sub.type == "object" and sub.properties then paths(sub, path .. ".", out) end
  end
  return out
end

-- kind name -> set of field paths (name, kind and meta are every entry's, not the kind's).
local function kinds()
  local schema = json.decode(h.run("schema").stdout)
  local out = {}
  for _, rule in ipairs(schema.properties.entries.items.allOf) do
    local fields = paths(rule["then"], "")
    fields.name, fields.kind, fields.meta = nil, nil, nil
    out[rule["if"].properties.kind.const] = fields
  end
  return out
end

-- The field names of a section's table rows: | `field` | ...
local function rows(text)
  local out = {}
  for field in text:gmatch("\n| `([%w_.]+)` |") do out[#out + 1] = field end
  return out
end

-- Whether text names path in backticks, whole or by a dotted suffix (prose such as
-- "`limits` (`memory`, `mailbox.bytes`)" names limits.memory and limits.mailbox.bytes).
local function named(text, path)
  repeat
    if text:find("`" .. path .. "`", 1, true) then return true end
    path = path:match("^[%w_]+%.(.+)$")
  until not path
  return false
end

describe("docs/registry.md", function()
  local all = kinds()

  it("names every field of every kind in its section", function()
    local lifecycle = section("lifecycle")
    local missing = {}
    for kind, fields in pairs(all) do
      if kind ~= "registry.entry" then
        local text = section(kind)
        for path in pairs(fields) do
          local rest = path:match("^lifecycle%.(.+)$")
          local ok = rest and (named(lifecycle, rest) or rest:match("^security%.")) or named(text, path)
          if not ok then missing[#missing + 1] = kind .. " " .. path end
        end
      end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("documents no field a kind does not have", function()
    local extra = {}
    for kind, fields in pairs(all) do
      if kind ~= "registry.entry" then
        for _, f in ipairs(rows(section(kind))) do
          if not fields[f] then extra[#extra + 1] = kind .. " " .. f end
        end
      end
    end
    for _, f in ipairs(rows(section("lifecycle"))) do
      if not all["process.service"]["lifecycle." .. f] then extra[#extra + 1] = "lifecycle " .. f end
    end
    table.sort(extra)
    assert.are.same({}, extra)
  end)

  it("lists every kind in its table of kinds", function()
    for kind in pairs(all) do
      assert.truthy(DOC:find("| [`" .. kind .. "`]", 1, true), "the table of kinds lacks " .. kind)
    end
  end)
end)
