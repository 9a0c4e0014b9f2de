-- The io module end to end (docs/lua-api.md "io"): each case runs `steward run -x io:run CASE`
-- on spec/apps/runtime/io and compares stdout and stderr whole (the app writes with io only).
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")

local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1

local function run(case, ...)
  return rt.ok(rt.run("io", "io:run", { case, ... }), true)
end

describe("io", function()
  it("io.write and io.stdout:write go to stdout as given (no tab, no newline added); io.stderr to stderr", function()
    local r = run("basic")
    assert.are.equal("a12.5b\nxy\nno newline at the end", r.stdout)
    assert.are.equal("err 42\n", r.stderr)
  end)

  it("returns the file; flush; the files are closed userdata; nothing opens a file; bad arguments raise", function()
    local r = run("api")
    assert.are.equal("", r.stderr)
    assert.are.equal(table.concat({
      "write returns stdout true true true",
      "flush returns the file true true",
      "file (stdout) file (stderr) io file",
      "files are not tables userdata",
      "no files nil nil nil nil nil nil nil nil",
      "false bad argument #2 to 'write' (string expected, got table)",
      "false bad argument #1 to 'write' (io file expected, got table)",
      "false bad argument #1 to 'write' (string expected, got nil)",
      "false cases.lua:29: attempt to modify a read-only host module (field 'write')",
    }, "\n") .. "\n", (r.stdout:gsub("false [^\n]*/cases%.lua:29:", "false cases.lua:29:"))) -- the path depends on the checkout
  end)

  it("keeps a line longer than its line buffer whole when nothing else writes", function()
    local r = run("long", 10000)
    assert.are.equal(("0123456789"):rep(1000) .. "\nafter\n", r.stdout)
  end)

  it("never interleaves lines of processes writing at once, each line written in pieces", function()
    local r = run("interleave", 4, 300)
    local count, seen = 0, {}
    for line in r.stdout:gmatch("([^\n]*)\n") do
      local id, i, dots = line:match("^w(%d)%-(%d+)(%.*)|$")
      assert.truthy(id, "torn line: " .. line)
      assert.are.equal(tonumber(i) % 50, #dots, line)
      seen[line] = true
      count = count + 1
    end
    assert.are.equal(1200, count)
    local distinct = 0
    for _ in pairs(seen) do distinct = distinct + 1 end
    assert.are.equal(1200, distinct) -- none lost, none twice
    assert.is_true(r.stdout:sub(-1) == "\n")
  end)

  it("waits for a reader that is late and slow, in the writing task: every line arrives", function()
    local out, err = os.tmpname(), os.tmpname()
    os.execute(("timeout -k 2 %d %s run %s -x io:run slow 4096 2>%s | (sleep 1; cat >%s)"):format(
      30 * SLOW, h.quote(h.steward), h.quote(rt.APPS .. "/io"), err, out))
    local got, report = h.read(out), h.read(err)
    os.remove(out)
    os.remove(err)
    assert.are.equal("slow ok=4096\n", report)
    assert.are.equal((("y"):rep(1023) .. "\n"):rep(4096), got)
  end)

  it("never blocks the worker on a reader that does not read: the task waits, then gives up and says so", function()
    local err, rc, fifo = os.tmpname(), os.tmpname(), os.tmpname()
    os.remove(fifo)
    assert(os.execute("mkfifo " .. fifo))
    -- stdout is a FIFO held open by `sleep`, which never reads it; killed once steward is done
    local cmd = ("sleep 60 <%s & r=$!; s=$(date +%%s.%%N); timeout -k 2 %d %s run %s -x io:run flood >%s 2>%s; " ..
                 "echo \"$? $s $(date +%%s.%%N)\" >%s; kill $r"):format(
      fifo, 30 * SLOW, h.quote(h.steward), h.quote(rt.APPS .. "/io"), fifo, err, rc)
    os.execute("sh -c " .. h.quote(cmd))
    os.remove(fifo)
    local report, code = h.read(err), h.read(rc)
    os.remove(err)
    os.remove(rc)
    local status, t0, t1 = code:match("^(%d+) ([%d.]+) ([%d.]+)")
    assert.are.equal("0", status, report)
    local accepted, waited, ticks = report:match("accepted_kb=(%d+) waited=([%d.]+) ticks_while_waiting=(%d+)")
    assert.truthy(accepted, report)
    -- the stream's buffer (1 MB) and the pipe took about this much before the writes waited
    assert.is_true(tonumber(accepted) >= 1000 and tonumber(accepted) <= 1200, report)
    -- the write waited its patience (5 s without progress), while the process's other task ran
    assert.is_true(tonumber(waited) >= 4.9 and tonumber(waited) < 5 + 3 * SLOW, report)
    assert.is_true(tonumber(ticks) >= 100 / SLOW, report)
    assert.truthy(report:find("error: io: stdout is not keeping up: output dropped after 5 s without progress\n", 1, true), report)
    -- the host gives up on the stuck reader after its flush timeout (2 s) instead of waiting for it
    assert.is_true(tonumber(t1) - tonumber(t0) < 7 + 4 * SLOW, "took " .. (tonumber(t1) - tonumber(t0)))
  end)
end)
