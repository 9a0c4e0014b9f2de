-- Host modules, end to end (docs/lua-api.md, docs/operating.md): logger, errors, json, registry, require and
-- read-only module tables. Each case runs `steward run -x mods:run CASE` on
-- spec/apps/runtime/modules and compares what the process printed (and logged).
local rt = require("spec.lua.runtime_helper")
local ok_json, dkjson = pcall(require, "dkjson")

local APP = "modules"

local function run(case, opts)
  return rt.run(APP, "mods:run", { case }, opts)
end

local function has(s, sub)
  assert.is_truthy(s:find(sub, 1, true), "missing " .. sub .. " in:\n" .. s)
end

local LOGGER_STDOUT = "bad msg\tfalse\tbad argument #1 to '?' (string expected, got table)\n" ..
                      "bad fields\tfalse\tbad argument #2 to '?' (table or nil expected, got string)\n" ..
                      "pid\thost|0x0001\n"

describe("logger", function()
  it("writes text lines on stderr with the fields, sorted, and the host's pid last", function()
    local r = rt.ok(run("logger"), true)
    assert.are.equal(LOGGER_STDOUT, r.stdout)
    local lines = rt.lines(r.stderr)
    assert.are.equal(3, #lines, r.stderr) -- debug is below the default level
    -- HH:MM:SS.mmm LEVEL SERVICE  MSG  fields; `-x` runs no service: the column is "-"
    assert.matches("^%d%d:%d%d:%d%d%.%d%d%d INFO  %-  info line  count=3 list=%[1,2%] ok=true user=ann pid=host|0x0001$", lines[1])
    assert.matches("^%d%d:%d%d:%d%d%.%d%d%d WARN  %-  warn line  pid=host|0x0001$", lines[2])
    -- a pid given in the fields never replaces the process's own
    assert.matches("^%d%d:%d%d:%d%d%.%d%d%d ERROR %-  error line  \"with space\"=\"a b\" pid=host|0x0001$", lines[3])
  end)

  it("writes JSON lines with --log-format json", function()
    local r = rt.ok(run("logger", { options = { "--log-format", "json" } }), true)
    assert.are.equal(LOGGER_STDOUT, r.stdout)
    local lines = rt.lines(r.stderr)
    assert.are.equal(3, #lines, r.stderr)
    assert.matches('^{"ts":"%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%dZ","level":"info","msg":"info line",' ..
                   '"count":3,"list":%[1,2%],"ok":true,"user":"ann","pid":"host|0x0001"}$', lines[1])
    has(lines[2], '"level":"warn","msg":"warn line","pid":"host|0x0001"}')
    has(lines[3], '"level":"error","msg":"error line","with space":"a b","pid":"host|0x0001"}')
    if ok_json then
      for _, line in ipairs(lines) do
        local v = dkjson.decode(line)
        assert.are.equal("table", type(v), line)
        assert.are.equal("host|0x0001", v.pid)
      end
    end
  end)

  it("--log-level filters the lines", function()
    local r = rt.ok(run("logger", { options = { "--log-format", "json", "--log-level", "debug" } }), true)
    local lines = rt.lines(r.stderr)
    assert.are.equal(4, #lines, r.stderr)
    has(lines[1], '"level":"debug","msg":"debug line","n":0,"pid":"host|0x0001"}')
    r = rt.ok(run("logger", { options = { "--log-level", "error" } }), true)
    lines = rt.lines(r.stderr)
    assert.are.equal(1, #lines, r.stderr)
    has(lines[1], " ERROR -  error line ")
  end)
end)

describe("errors", function()
  it("errors.new: fields, defaults, tostring, errors.is, protected metatable, copies", function()
    assert.are.equal(table.concat({
      "fields\tdisk full\tio\tfalse\t/x",
      "tostring\tio: disk full",
      "defaults\tplain\terror\ttrue\tplain",
      "is\ttrue\ttrue\tfalse\tfalse\tfalse",
      "metatable\tfalse",
      "setmetatable\tfalse\tcannot change a protected metatable",
      "raised\tfalse\ttrue\tio",
      "no message\tfalse\tbad argument #1 to 'new' (field 'message' must be a string)",
      "bad kind\tfalse\tbad argument #1 to 'new' (field 'kind' must be a string)",
      "unknown field\tfalse\tbad argument #1 to 'new' (unknown field 'colour' (expected message, kind, retryable or details))",
      "bad arg\tfalse\tbad argument #1 to 'new' (table or string expected, got boolean)",
      "copy\ttrue\tdisk full\tfalse",
    }, "\n") .. "\n", rt.ok(run("errors")).stdout)
  end)

  it("a process that returns nil, err or raises an error value fails with its message", function()
    local r = run("fail_with_error")
    assert.are.equal(1, r.code)
    assert.are.equal("mods:run: no route\n", r.stderr)
    r = run("raise_error")
    assert.are.equal(1, r.code)
    assert.matches("^mods:run: exploded\nstack traceback:\n", r.stderr)
  end)
end)

describe("json", function()
  it("encodes and decodes; bad input gives nil, err", function()
    assert.are.equal(table.concat({
      "roundtrip\t{list={1=1,2=2,3=3},name=x,nested={ok=true}}",
      'scalars\t1.5\t"a\\"b"\ttrue\t{}',
      'list\t[1,"two",false]',
      'null\t{"a":null}\t{b={1=1,3=3}}',
      "decode null\tnil",
      "decode error\tnil\tExpected object key string but found invalid token at character 2",
      "decode type\tnil\tjson.decode: expected a string, got number",
      "encode function\tnil\tCannot serialise function: type not supported",
      "encode deep\tnil\ttrue",
      "encode cycle\tnil\ttrue",
      "decode deep\ttrue",
      "unicode\ttrue",
    }, "\n") .. "\n", rt.ok(run("json")).stdout)
  end)
end)

describe("registry", function()
  it("get and find read copies of the app's own entries", function()
    assert.are.equal(table.concat({
      "get\tmods:settings\tsettings\tmods\tregistry.entry",
      "meta\t{level=2,team=runtime,type=config}",
      -- data holds the entry's fields as written; a registry.entry's own field is `data`
      "data\t{data={greeting=hello,nested={deep={flag=true}},ports={1=80,2=443}}}",
      "copy\thello",
      "missing\tnil\tno entry mods:nope",
      "find kind\tmods:settings mods:other_settings",
      "find meta\tmods:other_settings",
      "find namespace\tmods.lib:configs",
      "find none\t0",
      "find bad kind\tfalse\tbad argument #1 to '?' (unknown kind 'process.nope')",
      "find bad key\tfalse\tbad argument #1 to '?' (unknown criterion 'colour' (expected kind, namespace, name or meta.<path>))",
      "own process\tprocess.lua\tmods:greeter",
    }, "\n") .. "\n", rt.ok(run("registry")).stdout)
  end)
end)

describe("require", function()
  it("returns imports (a library with its own imports, run once) and host modules; nothing else", function()
    assert.are.equal(table.concat({
      "import\tHELLO ANN!",
      "library's own import\tfalse",
      "once\ttrue\t1",
      "host modules\ttrue\ttrue\ttrue\ttrue\ttrue\ttrue",
      "the library's import is in package.loaded\ttable\ttrue",
      "unknown\tfalse\tmodule 'nope' not found: no such host module or import",
      "by id\tfalse\tmodule 'mods:greeter' not found: no such host module or import",
      "not a string\tfalse\tbad argument #1 to '?' (string expected, got no value)",
    }, "\n") .. "\n", rt.ok(run("require")).stdout)
  end)
end)

describe("host modules", function()
  it("are read-only", function()
    local out = rt.ok(run("readonly")).stdout
    local lines = rt.lines(out)
    for i, name in ipairs { "process", "channel", "time", "logger", "errors", "json", "registry", "coroutine" } do
      assert.are.equal(name .. "\tfalse\tattempt to modify a read-only host module (field 'injected')\tnil\tfalse", lines[i])
    end
    local rest = table.concat(lines, "\n", 9)
    for _, pat in ipairs {
      "replace\tfalse\t[^\n]*attempt to modify a read%-only host module %(field 'now'%)",
      "remove\tfalse\t[^\n]*attempt to modify a read%-only host module %(field 'encode'%)",
      "still there\tnumber\tfunction",
      "setmetatable\tfalse\tcannot change a protected metatable",
      "nested\tfalse\t[^\n]*%(field 'EXIT'%)",
      "nested value\texit",
      "registry names\tfalse\t[^\n]*%(field 'register'%)",
      "require gives the same\tfalse\t[^\n]*%(field 'sleep'%)",
    } do
      assert.matches(pat, rest)
    end
  end)
end)
