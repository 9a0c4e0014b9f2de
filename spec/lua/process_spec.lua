-- The `process` module end to end (docs/lua-api.md, scenarios 38-42): every spec runs one
-- process.lua of spec/apps/process with `steward run -x` and compares its exit code, stdout
-- and stderr. The Lua side prints what it saw; it waits on events and messages with a timeout
-- (channel.select + time.after), never on a sleep, so a missing event prints "nil"/"timeout"
-- instead of hanging, and a late one cannot be mistaken for an early one.
local h = require("spec.lua.steward_helper")

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/process"

local function run(name, ...)
  return h.run("run", APP, "-x", "proc:" .. name, ...)
end

-- A run that succeeded with exactly these lines on stdout and nothing on stderr.
local function ok(r, lines, code)
  assert.are.equal("", r.stderr)
  assert.are.equal(table.concat(lines, "\n") .. "\n", r.stdout)
  assert.are.equal(code or 0, r.code)
end

local function tab(...) return table.concat({ ... }, "\t") end

-- A file name as LuaJIT shows it in messages: paths of 60 bytes or more keep their last 56,
-- after "..." (the checkout may live anywhere).
local function shown(path)
  if #path >= 60 then return "..." .. path:sub(#path - 55) end
  return path
end

local function starts(prefix, s)
  assert.are.equal(prefix, s:sub(1, #prefix))
end

describe("process", function()
  describe("pid", function()
    it("is a host|0x-string, the same on every call, the one spawn returned and messages carry", function()
      ok(run("pid"), {
        tab("host|0x0001", "string", "true"),
        tab("host|0x0002", "true", "true"),
        '1 "hi"',
        tab("true", "true"),
      })
    end)
  end)

  describe("spawn", function()
    it("passes the arguments through as copies, nils and their count included", function()
      ok(run("spawn_args"), {
        '8 1 "two" {[10]="ten",a={b={c=3}},list={[1]=1,[2]=2,[3]=3}} true false nil 2.5 -7',
        "0",
        "2 nil nil",
      })
    end)

    it("takes relative and full ids; unknown ids, other kinds, broken chunks and bad arguments are nil, err", function()
      -- (the monitored and linked variants too, leaving no monitor or link behind)
      ok(run("spawn_ids"), {
        tab("string", '1 "relative"'),
        tab("string", '1 "full"', "true"),
        tab("nil", "no process.lua proc:nope"),
        tab("nil", "no process.lua other:child"),
        tab("nil", "proc:t is not a process.lua"),
        tab("nil", "proc:pool is not a process.lua"),
        tab("nil", "proc:settings is not a process.lua"),
        tab("nil", "string", "true"),
        tab("nil", "cannot send a function value (at payload#3)"),
        tab("false", "bad argument #1 to '?' (string expected, got no value)"),
        tab("false", "bad argument #1 to '?' (string expected, got table)"),
        tab("nil", "no process.lua proc:nope"),
        tab("nil", "proc:t is not a process.lua"),
        tab("nil", "broken.lua:2: <name> or '...' expected near '<eof>'"),
        tab("nil", "no process.host proc:nohost"),
        tab("nil", "cannot send a function value (at payload#3)"),
        tab("nil", "nil"),
      })
    end)

    it("runs on a declared process.host (full or relative id); an unknown host is nil, err", function()
      ok(run("spawn_host"), {
        tab("string", "nil", '1 "on pool"'),
        tab("string", "nil", '1 "relative pool"'),
        'exit from=c result={value="pool value"}',
        '1 "default"',
        tab("nil", "no process.host proc:nohost"),
        tab("nil", "no process.host proc:nohost"),
        tab("nil", "no process.host proc:child"),
        "nil",
      })
    end)
  end)

  describe("send, inbox and events", function()
    it("delivers to pids and names: topic, sender, several values, nested tables; dead targets are nil, err", function()
      ok(run("send"), {
        "true",
        tab("pong", "true", '"one"'),
        '"one"',
        "true",
        '1 nil {deep={er={est={[1]="x",[2]=true}}}} "last"',
        "true",
        tab("0", "true"),
        tab("1", "true"),
        tab("large", "true", "4000", "7", "4000"),
        tab("ab", "aa", "pong", "ab", "true", "true", "true", "true"),
        "true",
        tab("true", '"by name"'),
        tab("true", "true", "true"),
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        "exit",
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        tab("false", "bad argument #2 to 'send' (string expected, got no value)"),
        tab("false", "bad argument #1 to 'send' (string expected, got nil)"),
        "nil",
      })
    end)

    it("refuses cycles, functions, userdata, threads, table keys and oversized payloads, and goes on", function()
      ok(run("send_bad"), {
        tab("nil", "cannot send a table with a cycle (at payload.self)"),
        tab("nil", "cannot send a table with a cycle (at payload.a.b.back)"),
        tab("nil", "cannot send a function value (at payload#2)"),
        tab("nil", "cannot send a function value (at payload.f)"),
        tab("nil", "cannot send a userdata value (at payload)"),
        tab("nil", "cannot send a thread value (at payload)"),
        tab("nil", "cannot send a table with a table key (at payload)"),
        tab("nil", "message too large: over 67108864 bytes"),
        "nil",
        "true",
        '"after"',
      })
    end)

    it("keeps each sender's order over 10,000 messages from two senders on different threads", function()
      ok(run("send_order", "10000"), { tab("20000", "0", "10000", "10000") })
    end)
  end)

  describe("cancel", function()
    it("gives the target a CANCEL event with sender and reason; dead targets are nil, err", function()
      ok(run("cancel"), {
        "true",
        tab("true", "true", "shutting down"),
        'exit from=c result={value="cancelled"}',
        "true",
        tab("cancel", "nil"),
        'exit from=c result={value="cancelled"}',
        "true",
        tab("cancel", '{code=3,why="reload"}'),
        "true",
        '"still here"',
        'exit from=c result={value="done"}',
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        tab("nil", "cannot send a function value (at payload)"),
        "nil",
      })
    end)
  end)

  describe("terminate", function()
    it("ends a spinning process, a blocked one and a named one; dead targets are nil, err", function()
      ok(run("terminate"), {
        "true",
        'exit from=spinner result={error="killed"}',
        "true",
        "true",
        'exit from=waiter result={error="killed"}',
        "true",
        'exit from=named result={error="killed"}',
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        "nil",
      })
    end)

    it("of itself ends the caller as killed", function()
      local r = run("terminate_self")
      assert.are.equal("before\n", r.stdout)
      assert.are.equal("proc:terminate_self: killed\n", r.stderr)
      assert.are.equal(1, r.code)
    end)
  end)

  describe("monitor", function()
    it("gives result.value for a normal exit and result.error for failures, error objects intact", function()
      ok(run("monitor"), {
        "true",
        tab("true", "true", "{value={answer=42}}"),
        tab("exit", "true", "nil", "kaboom"),
        tab("exit", '{error="nope"}'),
        tab("exit", '{error={kind="config",message="final",retryable=false}}'),
        "true",
        tab("true", '{value="by name"}'),
        "nil",
      })
    end)

    it("of a process that already ended gives exactly one EXIT, at once (scenario 38)", function()
      ok(run("monitor_dead"), {
        'exit from=c result={value="gone"}',
        "true",
        'exit from=c result={error="no such process"}',
        "nil",
        "true",
        'exit from=host|0x7fff result={error="no such process"}',
        "true",
        tab("exit", "no such process"),
        "nil",
      })
    end)

    it("twice gives two EXIT events, and another monitoring process its own (scenario 39)", function()
      ok(run("monitor_two"), {
        'exit from=c result={value="bye"}',
        'exit from=c result={value="bye"}',
        tab("exit", "true"),
        "nil",
      })
    end)

    it("after unmonitor gives no EXIT, even one already on its way; other events stay in order (scenario 39)", function()
      ok(run("unmonitor"), {
        "true",
        "nil",
        "true",
        "nil",
        'cancel from=me reason="first"',
        'exit from=x result={value="x"}',
        'cancel from=me reason="last"',
        "nil",
        tab("true", "true", "true"),
        'exit from=c result={value="one"}',
        "nil",
      })
    end)
  end)

  describe("link", function()
    -- The run ends with 1 and the reason names B; B's pid is what the process printed.
    local function killed_by_link(how)
      local r = run("link_crash", how)
      local b = r.stdout:match("B is (host|0x%x+)\n$")
      assert.is_truthy(b, r.stdout)
      starts("proc:link_crash: linked process " .. b .. " failed: B broke\n", r.stderr)
      assert.is_falsy(r.stdout:find("still alive", 1, true))
      assert.are.equal(1, r.code)
      return r
    end

    it("kills A when its linked B raises, with a reason naming B (scenario 40)", function()
      assert.are.equal("B is host|0x0002\n", killed_by_link("spawn_linked").stdout)
      assert.are.equal("true\nB is host|0x0002\n", killed_by_link("link").stdout)
      assert.are.equal("B is host|0x0002\n", killed_by_link("linker").stdout)
    end)

    it("with trap_links gives LINK_DOWN events and A keeps running, until trap_links is off (scenario 40)", function()
      local r = run("link_trap")
      assert.are.equal(table.concat({
        "true",
        tab("true", "true", "nil", "B broke"),
        "exit/true/C broke link_down/true/C broke",
        tab("link_down", "true", "killed"),
        "nil",
        "true",
      }, "\n") .. "\n", r.stdout)
      starts("proc:link_trap: linked process host|0x0005 failed: E broke\n", r.stderr)
      assert.are.equal(1, r.code)
    end)

    it("does not kill A when B exits normally (scenario 40)", function()
      ok(run("link_normal"), {
        'exit from=B result={value="fine"}',
        "A alive",
        "exit from=C result={value=false}",
        "A alive",
        "exit from=D result={value=0}",
        "nil",
      })
    end)

    it("refuses self and dead targets, is undone by unlink, and works both ways", function()
      ok(run("link_ops"), {
        tab("nil", "cannot link to itself"),
        tab("nil", "no such process"),
        tab("nil", "no such process"),
        "nil",
        "true",
        'exit from=B result={error="B broke"}',
        "alive after unlinked failure",
        tab("true", "true"),
        "A: A broke",
        "B: linked process A failed: A broke",
        tab("false", "bad argument #1 to 'set_options' (table expected, got string)"),
      })
    end)
  end)

  describe("a supervisor written in Lua", function()
    it("keeps a crashing worker alive with spawn_monitored, EXIT events and respawns (scenario 41)", function()
      ok(run("supervisor", "5"), {
        "crash 1: crash #1",
        "crash 2: crash #2",
        "crash 3: crash #3",
        "crash 4: crash #4",
        "crash 5: crash #5",
        "done: {attempt=6}",
        tab("restarts 5", "pids 6", "true"),
      })
    end)
  end)

  describe("registry", function()
    it("registers, looks up and unregisters names, released when their process ends (scenario 42)", function()
      ok(run("names"), {
        "true",
        "true",
        "true",
        'nil "name already registered"',
        tab("nil", "names may not look like pids"),
        tab("nil", "names may not look like pids"),
        "true",
        "true",
        '"hello"',
        tab("true", "true"),
        "true",
        tab("nil", "no process registered under that name"),
        tab("nil", "no process registered under that name"),
        tab("true", "true", "true"),
        "exit from=c result={}",
        tab("nil", "no process registered under that name"),
        tab("nil", "no such process"),
        "true nil",
        "true",
        'exit from=d result={error="bad"}',
        tab("nil", "no process registered under that name"),
        tab("nil", "no process registered under that name"),
        tab("nil", "no such process"),
        tab("nil", "no process registered under that name"),
        tab("nil", "no process registered under that name"),
        tab("false", "bad argument #1 to 'register' (string expected, got no value)"),
        "true",
      })
    end)
  end)

  describe("failures and exit codes", function()
    local function failed(how, err, traceback)
      local r = run("errors_final", how)
      assert.are.equal("start " .. how .. "\n", r.stdout)
      if traceback then
        starts("proc:errors_final: " .. err .. "\nstack traceback:\n", r.stderr)
      else
        assert.are.equal("proc:errors_final: " .. err .. "\n", r.stderr)
      end
      assert.are.equal(1, r.code)
    end

    it("an errors.new{retryable = false} raised or returned fails the process with its message", function()
      failed("raise", "config is broken", true)
      failed("return", "config is broken")
      failed("plain", "plain failure")
    end)

    it("a returned nil, err exits 1 with the error printed; so does a raised error", function()
      failed("string", "err")
      failed("number", "42")
      failed("raise_string", shown(APP .. "/src/errors_final.lua") .. ":10: raised text", true)
      failed("raise_table", "(error object is a table value)", true)
    end)

    it("a returned non-zero number fails with that exit code; 0 and any other value succeed", function()
      local expect = { ["0"] = 0, ["true"] = 0, ["false"] = 0, string = 0, table = 0, nothing = 0, nil_nil = 0 }
      for what, code in pairs(expect) do
        local r = run("exit_code", what)
        assert.are.same({ code = code, stdout = "", stderr = "" }, r, what)
      end
      local fail = { ["7"] = { 7, "exited with code 7" }, ["300"] = { 1, "exited with code 300" },
                     ["-2"] = { 1, "exited with code -2" }, ["1.5"] = { 1, "exited with code 1.5" },
                     false_err = { 1, "why" } }
      for what, f in pairs(fail) do
        local r = run("exit_code", what)
        assert.are.same({ code = f[1], stdout = "", stderr = "proc:exit_code: " .. f[2] .. "\n" }, r, what)
      end
      local r = run("exit_code", "args", "x", "y")
      assert.are.same({ code = 3, stdout = tab("args", "2") .. "\n", stderr = "proc:exit_code: exited with code 3\n" }, r)
    end)
  end)

  describe("the module", function()
    it("has the event constants and every function; ready() outside a service is a harmless true", function()
      ok(run("constants"), {
        tab("string", "string", "string"),
        tab("true", "true", "true"),
        tab("exit", "link_down", "cancel"),
        "nil",
        tab("true", "true"),
        "missing: ",
        tab("true", "true"),
      })
    end)

    it("is read-only, its event and registry tables too", function()
      local err = "attempt to modify a read-only host module (field '%s')"
      ok(run("readonly"), {
        tab("false", err:format("x")),
        tab("false", err:format("spawn")),
        tab("false", err:format("EXIT")),
        tab("false", err:format("NEW")),
        tab("false", err:format("lookup")),
        tab("false", "cannot change a protected metatable"),
        "false",
        tab("nil", "function", "exit", "function"),
        "nil",
      })
    end)
  end)
end)
