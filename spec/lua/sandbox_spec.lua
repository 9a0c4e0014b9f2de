-- Sandbox escapes S1-S9, S11, S13-S15 (docs/security.md "Sandbox escapes tried") and scenario 48
-- at the process level, end to end on spec/apps/runtime/sandbox: each must fail inside the
-- process and leave the host running.
local rt = require("spec.lua.runtime_helper")

local APP = "sandbox"

local function case(name, ...)
  return rt.ok(rt.run(APP, "sb:run", { name, ... })).stdout
end

-- The preemption check (src/preempt.lua): a spinner of `mode` on the one-worker host next to
-- an echo process and a ticking process, then process.terminate, timed.
local function preempt(mode, others)
  local r = rt.run(APP, "sb:preempt", { mode, others }, { limit = 30 })
  rt.ok(r)
  return r.stdout
end

local KILLED = "alive\ttrue\nterminate\ttrue\nexit\texit\ttrue\tkilled\nkilled within 1s\ttrue\n"

describe("sandbox", function()
  it("S1, S4: no file io, package, ffi, getfenv, setfenv, dofile, loadfile, newproxy; os, debug, jit are safe subsets", function()
    assert.are.equal(table.concat({
      "S1\tnil\tnil\tnil\tnil\tnil\tnil\tnil\tnil",
      "S4\tfalse\tgetfenv: not allowed on a host function\tfalse\tsetfenv: level 0 (the thread's environment) is not allowed\tnil\tnil\tnil",
      "raw\tnil\tnil\tnil\tnil",
      "os\tclock date difftime time getenv",
      "debug\ttraceback getinfo getmetatable setmetatable",
      "jit\tversion version_num os arch status",
      -- the whole allow-list: anything new here needs a review
      "globals\t_G _VERSION assert bit channel collectgarbage coroutine debug error errors getfenv getmetatable io ipairs " ..
        "jit json load loadstring logger math next os package pairs pcall print process rawequal rawget rawset registry " ..
        "require select setfenv setmetatable string table time tonumber tostring type unpack xpcall",
      "string\tbyte char find format gmatch gsub len lower match rep reverse sub upper",
      "table\tconcat foreach foreachi getn insert maxn move remove sort",
      "math\tabs acos asin atan atan2 ceil cos cosh deg exp floor fmod frexp huge ldexp log log10 max min " ..
        "modf pi pow rad random randomseed sin sinh sqrt tan tanh",
      "bit\tarshift band bnot bor bswap bxor lshift rol ror rshift tobit tohex",
      "coroutine\tcreate isyieldable resume running status wrap yield spawn",
    }, "\n") .. "\n", case("globals"))
  end)

  it("S2: load refuses binary chunks, given as a string or by a reader, whatever the mode", function()
    local refused = "nil\tattempt to load a binary chunk (binary chunks are not allowed)"
    assert.are.equal(table.concat({
      "load\t" .. refused,
      "loadstring\t" .. refused,
      "reader\t" .. refused,
      "mode b\t" .. refused,
      "text with mode b\ttrue\t1",
      "text\t42",
      "env\tenv",
    }, "\n") .. "\n", case("binary"))
  end)

  it("S3: the string metatable is hidden and there is no string.dump", function()
    local out = case("strings")
    assert.are.equal("S3\tfalse\tnil\tnil", rt.lines(out)[1])
    assert.matches("\nindex\tfalse\t[^\n]*attempt to index a boolean value\n", out)
    assert.matches("\nmethods\tABC\t7\n$", out)
  end)

  it("S5: `while true do end` is preempted (others on its worker run, timers fire) and killable", function()
    assert.are.equal("spinning\tplain\npongs\t20\nticks\t5\n" .. KILLED, preempt("plain"))
  end)

  it("S6: a spin inside pcall inside a spin is preempted and killable", function()
    assert.are.equal("spinning\tpcall\npongs\t20\nticks\t5\n" .. KILLED, preempt("pcall"))
  end)

  it("S7: a spin inside user coroutines is preempted and killable", function()
    assert.are.equal("spinning\tcoroutine\npongs\t20\nticks\t5\n" .. KILLED, preempt("coroutine"))
    assert.are.equal("spinning\twrap\npongs\t20\nticks\t5\n" .. KILLED, preempt("wrap"))
  end)

  it("a spinning coroutine.spawn task, and a spinner that catches its own kill, are preempted and killable", function()
    assert.are.equal("spinning\ttask\npongs\t20\nticks\t5\n" .. KILLED, preempt("task"))
    assert.are.equal("spinning\tcatch\npongs\t20\nticks\t5\n" .. KILLED, preempt("catch"))
  end)

  it("spins inside a C call (sort comparator, gsub callback, xpcall handler) cannot be preempted but are killable", function()
    for _, mode in ipairs { "sort", "gsub", "xpcall_handler" } do
      assert.are.equal("spinning\t" .. mode .. "\n" .. KILLED, preempt(mode, "no"))
    end
  end)

  it("S8: under limits.memory 32MB the hog fails alone with \"memory limit exceeded\"; the host lives", function()
    local r = rt.run(APP, "sb:hog")
    assert.is_false(r.hung)
    assert.are.equal(1, r.code)
    assert.matches("^sb:hog: memory limit exceeded\n", r.stderr)
    -- catching the error does not save it
    r = rt.run(APP, "sb:hog", { "catch" })
    assert.are.equal(1, r.code)
    assert.matches("^sb:hog: memory limit exceeded\n", r.stderr)
    -- spawned: the parent gets the EXIT event and goes on
    local out = case("memory")
    local lines = rt.lines(out)
    assert.matches("^grow\texit\ttrue\tnil\tmemory limit exceeded", lines[1])
    assert.is_truthy(out:find("\ncatch\texit\ttrue\tnil\tmemory limit exceeded", 1, true), out)
    assert.matches("\nafter\tstill here\nown memory small\ttrue\n$", out)
  end)

  it("S9: collectgarbage allows only \"count\"", function()
    local lines = {}
    for _, opt in ipairs { "stop", "collect", "step", "setpause", "restart" } do
      lines[#lines + 1] = opt .. "\tfalse\tcollectgarbage('" .. opt .. "') is not allowed (only 'count')"
    end
    lines[#lines + 1] = "default\tfalse\tcollectgarbage('collect') is not allowed (only 'count')"
    lines[#lines + 1] = "count\tnumber\ttrue"
    assert.are.equal(table.concat(lines, "\n") .. "\n", case("gc"))
  end)

  it("S11: a process that sets string.upper = nil breaks only itself", function()
    assert.are.equal("a\ttrue\nb\tA\tB\n", case("upper"))
  end)

  it("S13: an error value whose metamethods never return ends the process; reporting does not hang", function()
    for _, how in ipairs { "tostring", "index", "concat" } do
      local r = rt.run(APP, "sb:bad_tostring", { how }, { limit = 10 })
      assert.is_false(r.hung, how .. " hung")
      assert.are.equal(1, r.code)
      assert.matches("^sb:bad_tostring: %(error object is a table value%)\nstack traceback:\n", r.stderr)
    end
    local r = rt.run(APP, "sb:bad_tostring", { "return" }, { limit = 10 })
    assert.is_false(r.hung)
    assert.are.equal(1, r.code)
    assert.are.equal("sb:bad_tostring: (error object)\n", r.stderr)
    -- a monitor gets a plain copy: no metatable, nothing runs
    assert.are.equal("tostring\texit\ttable\tnil\nindex\texit\ttable\tnil\nreturn\texit\ttable\tnil\n" ..
                     "concat\texit\ttable\tnil\n", case("bad_error_monitored"))
  end)

  it("S14: a catastrophic pattern fails with \"pattern too complex\" instead of running for minutes", function()
    local r = rt.ok(rt.run(APP, "sb:run", { "pattern" }))
    assert.are.equal(table.concat({
      "find\tfalse\tpattern too complex",
      "fast\ttrue",
      "match\tfalse\tpattern too complex",
      "gsub\tfalse\tpattern too complex",
      "fast\ttrue",
      "normal\tkey\tvalue",
      "gsub normal\thell0 w0rld\t2",
    }, "\n") .. "\n", r.stdout)
  end)

  it("S14: a process matching catastrophic patterns in a loop lets others progress and is killable", function()
    -- each match is one C call (up to its budget): the worker switches between calls
    assert.are.equal("spinning\tpattern\nprogress\ttrue\n" .. KILLED, preempt("pattern", "progress"))
  end)

  it("S15: require of ffi, a path, or any other non-module fails; os, debug, jit, package are the safe subsets", function()
    local lines = {}
    for _, name in ipairs { "os", "ffi", "../../etc/passwd", "io.open", "debug", "jit", "package", "jit.opt", "string.dump" } do
      if name == "os" or name == "debug" or name == "jit" or name == "package" then
        lines[#lines + 1] = name .. "\ttrue\ttable"
      else
        lines[#lines + 1] = name .. "\tfalse\tmodule '" .. name .. "' not found: no such host module or import"
      end
    end
    assert.are.equal(table.concat(lines, "\n") .. "\n", case("require"))
  end)
end)

describe("scenario 48 (process level)", function()
  it("workers: 1 and `while true do end`: messages and timers keep flowing; terminate ends it in under 1 s", function()
    local r = rt.ok(rt.run(APP, "sb:preempt", { "plain" }, { limit = 30 }))
    local lines = rt.lines(r.stdout)
    assert.are.same({ "spinning\tplain", "pongs\t20", "ticks\t5", "alive\ttrue", "terminate\ttrue",
                      "exit\texit\ttrue\tkilled", "killed within 1s\ttrue" }, lines)
  end)
end)
