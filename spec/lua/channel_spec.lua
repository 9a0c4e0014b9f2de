-- Channels and select, end to end (docs/lua-api.md): each case runs `steward run -x chan:run CASE`
-- on spec/apps/runtime/channel and compares what the process printed.
local rt = require("spec.lua.runtime_helper")

local function run(case, ...)
  return rt.ok(rt.run("channel", "chan:run", { case, ... })).stdout
end

describe("channel", function()
  it("unbuffered: a send waits until a receiver takes the value", function()
    assert.are.equal("m:send,t:receive,t:got x true,m:sent true\n", run("unbuffered_rendezvous"))
  end)

  it("buffered: sends up to the capacity do not block, the next one does", function()
    assert.are.equal("send1 true,send2 true,recv 1 true,recv 2 true,t:send3,t:sent3,recv 3 true\n", run("buffered"))
  end)

  it("channel.new rejects a capacity that is not a whole number >= 0", function()
    local out = run("bad_capacity")
    local lines = rt.lines(out)
    assert.are.equal(6, #lines, out)
    assert.matches("^%-1\tfalse\t.*capacity must be a whole number >= 0%)$", lines[1])
    assert.matches("^1%.5\tfalse\t.*capacity must be a whole number >= 0%)$", lines[2])
    assert.matches("^many\tfalse\t.*number expected", lines[3])
    assert.matches("^%-?nan\tfalse\t.*capacity must be a whole number >= 0%)$", lines[4])
    assert.matches("^default\ttrue\tchannel: ", lines[5])
    assert.matches("^zero\ttrue\tchannel: ", lines[6])
  end)

  it("delivers in send order; blocked senders are served first come, first served", function()
    assert.are.equal("single\t100\ttrue\nfifo\t11 21 31 12 13 22 32 23 33\n", run("ordering"))
  end)

  it("a closed channel: receive gives nil, false (after the buffered values); send gives false, err", function()
    assert.are.equal(table.concat({
      "receive\tnil false",
      "receive again\tnil false",
      "send\tfalse channel closed",
      "close twice ok",
      "buffered\ta true\tb true\tnil false",
      "send nil\tfalse\tbad argument #2 to '?' (value expected)",
    }, "\n") .. "\n", run("closed"))
  end)

  it("close wakes every blocked receiver, sender and select", function()
    assert.are.equal(table.concat({
      "receiver 1: nil false",
      "receiver 2: nil false",
      "receiver 3: nil false",
      "select: true nil false",
      "sender 1: false channel closed",
      "sender 2: false channel closed",
    }, "\n") .. "\n", run("close_wakes"))
  end)

  it("select with several ready cases takes the first ready one in list order", function()
    -- host/channel.c tries the cases in order and the first that can proceed wins (no
    -- random choice as in Go); a closed channel counts as ready
    assert.are.equal("first\ttrue\ta1\ttrue\nreversed\ttrue\tb1\ttrue\nb empty\ttrue\ta2\ttrue\n" ..
                     "closed first\ttrue\tnil\tfalse\n", run("select_ready"))
  end)

  it("select with default returns {default = true} only when no case is ready", function()
    assert.are.equal("empty\ttrue\tnil\tnil\nready\tnil\ttrue\t7\ttrue\nonly default\ttrue\n" ..
                     "send room\tnil\ttrue\ttrue\nsend full\ttrue\n", run("select_default"))
  end)

  it("select blocks until a case fires and unlinks the other cases", function()
    assert.are.equal("m:select,t:send,t:sent,m:fired true hello true,a has no receiver true\n", run("select_blocks"))
  end)

  it("select with send cases: ready, blocking, on a closed channel, losing to a receive", function()
    assert.are.equal(table.concat({
      "ready\ttrue\ttrue\tnil\t5\ttrue",
      "m:select,t:receive,t:got 6 true,m:fired true true",
      "closed\ttrue\tfalse",
      "mixed\ttrue\tin",
      "no stale sender\ttrue",
    }, "\n") .. "\n", run("select_send"))
  end)

  it("select with time.after as a timeout", function()
    assert.are.equal("timeout fired\ttrue\tnumber\ttrue\nwaited\ttrue\ttrue\ndata first\ttrue\tdata\ttrue\n",
                     run("select_timeout"))
  end)

  it("select with no cases and no default raises; malformed cases raise", function()
    assert.are.equal(table.concat({
      "no cases\tfalse\tselect with no cases and no default would block forever",
      "not a table\tfalse\tbad argument #1 to '?' (table expected, got nil)",
      "bad case\tfalse\tbad argument #1 to 'select' (case 1 is not a channel case)",
      "case without channel\tfalse\tbad argument #1 to 'select' (case 1 has no channel)",
    }, "\n") .. "\n", run("select_errors"))
  end)

  it("1,000 tasks send through one channel to 1,000 receivers; close releases 1,000 waiters", function()
    local r = rt.ok(rt.run("channel", "chan:run", { "many_tasks", 1000 }))
    assert.are.equal("received\t1000\ttrue\nreleased\t1000\n", r.stdout)
    assert.is_true(r.elapsed < 5, "took " .. r.elapsed .. " s")
  end)
  it("blocking inside user coroutines passes through to the scheduler", function()
    assert.are.equal("resume\ttrue\t13\nresume\ttrue\t1 2 3\tb\nstatus\tdead\nwrap\t1\tnumber\nwrap\t2\tnumber\n",
                     run("in_coroutines"))
  end)

  it("blocking inside a C call (sort comparator, gsub callback) raises and leaves the channel usable", function()
    local out = run("block_in_c_call")
    local lines = rt.lines(out)
    assert.matches("^sort\tfalse\t.*cannot block here: inside a C call", lines[1])
    assert.matches("^gsub\tfalse\t.*cannot block here: inside a C call", lines[2])
    assert.are.equal("after\tfine\ttrue", lines[3])
  end)

  it("coroutine.spawn passes its arguments to the task's function", function()
    assert.are.equal("3 a b c\tmethod\t0\ttrue\n", run("spawn_args"))
  end)

  it("an error in a spawned task fails the process; main returning drops blocked tasks", function()
    local r = rt.run("channel", "chan:run", { "task_error" })
    assert.is_false(r.hung)
    assert.are.equal(1, r.code)
    assert.matches("^chan:run: [^\n]*cases.lua:%d+: task failed\nstack traceback:\n", r.stderr)
    r = rt.run("channel", "chan:run", { "main_returns" })
    assert.is_false(r.hung)
    assert.are.equal(3, r.code) -- main's `return 3`: a failure with that code
    assert.are.equal("chan:run: exited with code 3\n", r.stderr)
  end)
end)
