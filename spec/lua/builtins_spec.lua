-- Hardening of the sandbox's builtins, end to end on spec/apps/runtime/builtins (the audit is
-- docs/sandbox-builtins.md): out of memory inside a builtin, builtins whose loop the caller
-- sizes, read-only host modules against rawset, and coroutines blocked in a host call.
local rt = require("spec.lua.runtime_helper")

local APP = "builtins"

-- STEWARD_SLOW: the binary runs under a sanitizer (TSan: about ten times slower)
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "1")

local function case(name, limit, ...)
  return rt.ok(rt.run(APP, "bi:run", { name, ... }, { limit = (limit or 10) * SLOW })).stdout
end

describe("builtins", function()
  it("out of memory inside tostring, string.sub/upper/lower/reverse/char fails the process, not the host", function()
    -- 50 processes per builtin at limits.memory 1MB, each running out inside the builtin in
    -- a different code shape (LuaJIT's fast functions crashed the host on some of them)
    local r = rt.run(APP, "bi:oom", { 50 }, { limit = 60 * SLOW })
    assert.is_false(r.hung)
    assert.are.equal(0, r.code, "host exit code " .. tostring(r.code) .. "\n" .. r.stderr)
    assert.are.equal("tostring\t50\nsub\t50\nupper\t50\nlower\t50\nreverse\t50\nchar\t50\n", r.stdout)
  end)

  it("insert and remove check positions (Lua 5.3); sized loops end at once", function()
    local out = case("bounds", nil, 5 * SLOW)
    local oob = "false\tbad argument #2 to '?' (position out of bounds)"
    assert.are.equal(table.concat({
      "insert 2^40\t" .. oob,
      "insert -2^40\t" .. oob,
      "insert 0\t" .. oob,
      "insert #t+2\t" .. oob,
      "insert in bounds\ty z 1 2 3 x",
      "remove -2^40\t" .. oob,
      "remove #t+2\t" .. oob,
      "remove 0\t" .. oob,
      "remove #t+1\t0",
      "remove empty\t0\t0",
      "remove in bounds\t1\t4\t2 3",
      "unpack 1e9\tfalse\ttoo many results to unpack",
      "char of 1e6\tfalse\ttoo many results to unpack",
      "concat 2^31\tfalse\tinvalid value (nil) at index 1 in table for 'concat'",
      "format %99999d\tfalse\tinvalid option '%999' to 'format'",
      "rep empty\t0\t0",
      "byte 1e9\tfalse\tstring slice too long",
      "select # 1e4\t7000",
      "gsub output\tfalse\tpattern too complex",
      "fast\ttrue",
    }, "\n") .. "\n", out)
  end)

  it("builtins that build a result as large as asked fail on the memory limit first", function()
    assert.are.equal(table.concat({
      "rep\ttrue\tmemory limit exceeded",
      "rep_sep\ttrue\tmemory limit exceeded",
      "gsub\ttrue\tmemory limit exceeded",
      "concat\ttrue\tmemory limit exceeded",
      "format\ttrue\tmemory limit exceeded",
    }, "\n") .. "\n", case("memory", 30))
  end)

  it("host modules refuse rawset and table.insert; pairs sees an empty proxy", function()
    local field = "false\tattempt to modify a read-only host module (field '%s')"
    assert.are.equal(table.concat({
      "rawset\t" .. field:format("x"),
      "rawset existing\t" .. field:format("send"),
      "rawset nil\t" .. field:format("now"),
      "rawset nested\t" .. field:format("EXIT"),
      "insert\t" .. field:format("1"),
      "insert at\t" .. field:format("1"),
      "remove\ttrue\tnil",
      "sort\ttrue\tnil",
      "unchanged\ttrue\tnil\tnil\texit",
      "pairs\t0\tnil\t0\tnil",
      "plain\t1\tv",
    }, "\n") .. "\n", case("readonly"))
  end)

  it("a coroutine blocked in a host call cannot be resumed by another task", function()
    local refused = "false\tcannot resume a coroutine blocked in a host call"
    assert.are.equal(table.concat({
      "resume sleeping\t" .. refused,
      "status\tsuspended",
      "resume nested\t" .. refused,
      "wrap receiving\t" .. refused,
      "sleep\ttrue slept nil nil",
      "nested\ttrue true inner slept nil",
      "receive\treal message nil nil",
      "after\tdead\tdead",
    }, "\n") .. "\n", case("blocked"))
  end)
end)
