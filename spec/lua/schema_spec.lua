-- The registry's JSON Schema (docs/operating.md "Editor support"): `steward schema` writes it
-- from the loader's own kind tables, the build puts it next to the binary, and every app in
-- the repository (examples, spec apps, the valid corpus) validates against it, while
-- registries `steward check` refuses for their shape (unknown fields and kinds, wrong types)
-- do not. Checked with python3-jsonschema (Draft 2020-12).
local h = require("spec.lua.steward_helper")

local BUILD = h.steward:match("^(.*)/[^/]+$") or "."
local PY = "/usr/bin/python3"

local function validate(...)
  local words = { PY, "spec/tools/validate_schema.py", h.quote(BUILD .. "/registry.schema.json") }
  for _, p in ipairs({ ... }) do words[#words + 1] = h.quote(p) end
  local p = assert(io.popen(table.concat(words, " ") .. " 2>&1; echo \"exit=$?\""))
  local out = p:read("*a")
  p:close()
  local body, code = out:match("^(.*)exit=(%d+)\n$")
  return tonumber(code), body
end

describe("the registry JSON Schema", function()
  it("steward schema prints the schema the build wrote", function()
    local r = h.run("schema")
    assert.are.equal(0, r.code, r.stderr)
    assert.are.equal(h.read(BUILD .. "/registry.schema.json"), r.stdout)
    for _, kind in ipairs { "process.lua", "process.service", "service.group", "security.policy", "function.lua" } do
      assert.truthy(r.stdout:find('"' .. kind .. '"', 1, true), "the schema lacks " .. kind)
    end
  end)

  it("every app in the repository validates", function()
    local code, out = validate("examples", "spec/apps", "spec/corpus/good")
    assert.are.equal(0, code, out)
    local n = tonumber(out:match("checked (%d+) files"))
    assert.is_true(n >= 40, out)
  end)

  it("registries with unknown fields or kinds, or wrong types, do not", function()
    for _, case in ipairs { "03-unknown-kind", "05-unknown-field", "13-type-enum", "76-function-lua" } do
      local code, out = validate("spec/corpus/bad/" .. case)
      assert.are.equal(1, code, case .. ": " .. out)
      assert.truthy(out:find("1 invalid", 1, true), out)
    end
  end)
end)
