-- The `funcs` module and function.lua entries end to end: each caller of spec/apps/funcs runs
-- with `steward run -x` and prints what it saw; the `guarded` service runs under `steward run`
-- with a policy that allows some calls only. Waits in the Lua side are bounded (timeouts), so a
-- missing result prints "nil"/"timeout" rather than hanging.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/funcs"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1

local function run(name, ...)
  return h.run("run", APP, "-x", "funcs:" .. name, ...)
end

local function ok(r, lines)
  assert.are.equal("", r.stderr)
  assert.are.equal(table.concat(lines, "\n") .. "\n", r.stdout)
  assert.are.equal(0, r.code)
end

local function tab(...) return table.concat({ ... }, "\t") end

describe("funcs", function()
  it("call returns every value, or nil, err: returned, raised (no traceback), structured, limits, copies, ids", function()
    ok(run("basics"), {
      '1 nil "three" {a={b=2}} 2',
      "42",
      "",
      "2",
      '{[10]="ten",list={[1]=1,[2]=2}}',
      '"handled x"',
      'nil "bad input: 7"',
      '"table" "try later" "busy" true true',
      'nil "boom"',
      "true true",
      '"final" "invalid" false',
      'nil "memory limit exceeded"',
      'nil "cannot send a function value (at payload.values[2])"',
      'nil "cannot send a function value (at payload#2)"',
      'nil "no function.lua funcs:nope"',
      'nil "no function.lua other:nope"',
      'nil "no function.lua funcs:not_a_function"',
      'nil "no function.lua funcs:t"',
      "false \"bad argument #1 to '?' (string expected, got no value)\"",
      '"5/nil 1/nil"',
      "nil",
    })
  end)

  it("async returns a channel that receives {values, error} once; its failures are nil, err", function()
    ok(run("async"), {
      '{values={[1]=1,[3]="three",[4]={a={b=2}},[5]=1,n=5}}',
      '{error="bad input: y",values={n=0}}',
      '{error="boom",values={n=0}}',
      '{error={kind="busy",message="try later",retryable=true},values={n=0}}',
      "nil",
      tab("nil", "no function.lua funcs:nope"),
      tab("nil", "cannot send a function value (at payload)"),
      "6",
      "nil",
    })
  end)

  it("finishes 1,000 sequential calls, 100 concurrent async calls and 100 calls from tasks", function()
    local r = rt.ok(rt.run("../funcs", "funcs:many", {}, { limit = 60 * SLOW }))
    assert.are.equal(table.concat({
      tab("sequential", "1000", "501500"),
      tab("concurrent", "100", "5050"),
      tab("tasks", "5050"),
    }, "\n") .. "\n", r.stdout)
  end)

  it("kills a caller's function processes when it is killed, or returns with a task waiting or an async call in flight", function()
    local r = rt.ok(rt.run("../funcs", "funcs:owned", {}, { limit = 30 * SLOW }))
    assert.are.equal(table.concat({
      tab("killed caller", "true"),
      tab("returned with a waiting task", "true"),
      tab("returned with an async call", "true"),
      "42",
    }, "\n") .. "\n", r.stdout)
  end)

  it("is guarded by funcs.call before the lookup; the function inherits the caller's guard and actor", function()
    local out, err, pidf = os.tmpname(), os.tmpname(), os.tmpname()
    os.execute(("(%s run %s >%s 2>%s </dev/null & echo $! >%s) >/dev/null 2>&1"):format(
      h.quote(h.steward), h.quote(APP), out, err, pidf))
    local pid = tonumber(h.read(pidf))
    local deadline = os.time() + 15 * SLOW
    while not h.read(out):find("guarded done", 1, true) and os.time() < deadline do os.execute("sleep 0.05") end
    os.execute("kill -TERM " .. pid .. " 2>/dev/null")
    deadline = os.time() + 15 * SLOW
    while not h.read(err):find("stopped", 1, true) and os.time() < deadline do os.execute("sleep 0.05") end
    local stdout = h.read(out)
    for _, p in ipairs({ out, err, pidf }) do os.remove(p) end
    assert.are.equal(table.concat({
      "guarded add 3",
      'guarded multi nil "permission denied: funcs.call on funcs:multi"',
      'guarded unknown nil "permission denied: funcs.call on funcs:nope"',
      'guarded async nil "permission denied: funcs.call on funcs:multi"',
      'guarded nested "5/nil nil/permission denied: funcs.call on funcs:multi"',
      'guarded actor "svc:guarded"',
      "guarded done",
    }, "\n") .. "\n", stdout)
  end)

  it("cannot be run with -x (a service running one is refused by check: corpus bad/76-function-lua)", function()
    local r = run("add")
    assert.are.equal("steward: funcs:add is not a process.lua\n", r.stderr)
    assert.are.equal(2, r.code)
  end)
end)
