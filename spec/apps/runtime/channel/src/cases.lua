-- Each case prints what it observed, one fact per line; the spec compares the lines.
local cases = {}

-- Joins values as text: nil stays visible.
local function show(...)
  local n, t = select("#", ...), {}
  for i = 1, n do t[i] = tostring((select(i, ...))) end
  return table.concat(t, " ")
end

-- A log of events in the order they happened.
local function recorder()
  local log = {}
  return log, function(s) log[#log + 1] = s end
end

function cases.unbuffered_rendezvous()
  local ch = channel.new()
  local log, rec = recorder()
  local done = channel.new(1)
  coroutine.spawn(function()
    rec("t:receive")
    local v, ok = ch:receive()
    rec("t:got " .. show(v, ok))
    done:send(true)
  end)
  rec("m:send")
  local ok = ch:send("x") -- blocks until the task takes it
  rec("m:sent " .. tostring(ok))
  done:receive()
  print(table.concat(log, ","))
end

function cases.buffered()
  local ch = channel.new(2)
  local log, rec = recorder()
  rec("send1 " .. tostring(ch:send(1)))
  rec("send2 " .. tostring(ch:send(2))) -- room for two: no block
  coroutine.spawn(function()
    rec("t:send3")
    ch:send(3) -- full: blocks until main receives
    rec("t:sent3")
  end)
  for _ = 1, 3 do
    local v, ok = ch:receive()
    rec("recv " .. show(v, ok))
  end
  print(table.concat(log, ","))
end

function cases.bad_capacity()
  for _, cap in ipairs { -1, 1.5, "many", 0 / 0 } do
    local ok, err = pcall(channel.new, cap)
    print(tostring(cap), ok, ok and "" or tostring(err))
  end
  print("default", pcall(channel.new))
  print("zero", pcall(channel.new, 0))
end

function cases.ordering()
  -- one producer, unbuffered: values arrive in send order
  local ch = channel.new()
  coroutine.spawn(function()
    for i = 1, 100 do ch:send(i) end
    ch:close()
  end)
  local got = {}
  while true do
    local v, ok = ch:receive()
    if not ok then break end
    got[#got + 1] = v
  end
  local inorder = #got == 100
  for i = 1, #got do inorder = inorder and got[i] == i end
  print("single", #got, inorder)
  -- three producers blocked on one channel: served first come, first served
  local ch2 = channel.new()
  local ready = channel.new(3)
  for p = 1, 3 do
    coroutine.spawn(function()
      ready:send(p)
      for i = 1, 3 do ch2:send(p * 10 + i) end
    end)
  end
  for _ = 1, 3 do ready:receive() end
  local seq = {}
  for _ = 1, 9 do seq[#seq + 1] = (ch2:receive()) end
  print("fifo", table.concat(seq, " "))
end

function cases.closed()
  local ch = channel.new()
  ch:close()
  print("receive", show(ch:receive()))
  print("receive again", show(ch:receive()))
  print("send", show(ch:send(1)))
  ch:close() -- twice is fine
  print("close twice ok")
  local b = channel.new(3)
  b:send("a")
  b:send("b")
  b:close()
  print("buffered", show(b:receive()), show(b:receive()), show(b:receive()))
  print("send nil", pcall(ch.send, ch))
end

function cases.close_wakes()
  local rch, sch = channel.new(), channel.new()
  local results = channel.new(10)
  local ready = channel.new(10)
  for i = 1, 3 do
    coroutine.spawn(function()
      ready:send(true)
      results:send("receiver " .. i .. ": " .. show(rch:receive()))
    end)
  end
  for i = 1, 2 do
    coroutine.spawn(function()
      ready:send(true)
      results:send("sender " .. i .. ": " .. show(sch:send(i)))
    end)
  end
  -- a select blocked on the channel wakes too
  coroutine.spawn(function()
    ready:send(true)
    local r = channel.select { rch:case_receive() }
    results:send("select: " .. show(r.channel == rch, r.value, r.ok))
  end)
  for _ = 1, 6 do ready:receive() end -- every task is now blocked
  rch:close()
  sch:close()
  local lines = {}
  for _ = 1, 6 do lines[#lines + 1] = (results:receive()) end
  table.sort(lines)
  for _, l in ipairs(lines) do print(l) end
end

function cases.select_ready()
  local a, b = channel.new(5), channel.new(5)
  a:send("a1")
  a:send("a2")
  b:send("b1")
  local r = channel.select { a:case_receive(), b:case_receive() }
  print("first", r.channel == a, r.value, r.ok)
  r = channel.select { b:case_receive(), a:case_receive() }
  print("reversed", r.channel == b, r.value, r.ok)
  r = channel.select { b:case_receive(), a:case_receive() }
  print("b empty", r.channel == a, r.value, r.ok)
  -- a closed channel is ready: its case fires with ok = false
  local c = channel.new()
  c:close()
  r = channel.select { c:case_receive(), a:case_receive() }
  print("closed first", r.channel == c, r.value, r.ok)
end

function cases.select_default()
  local a = channel.new()
  local r = channel.select { a:case_receive(), default = true }
  print("empty", r.default, r.channel, r.value)
  a = channel.new(1)
  a:send(7)
  r = channel.select { a:case_receive(), default = true }
  print("ready", r.default, r.channel == a, r.value, r.ok)
  r = channel.select { default = true }
  print("only default", r.default)
  r = channel.select { a:case_send(1), default = true }
  print("send room", r.default, r.channel == a, r.ok)
  r = channel.select { a:case_send(2), default = true }
  print("send full", r.default)
end

function cases.select_blocks()
  local a, b = channel.new(), channel.new()
  local log, rec = recorder()
  coroutine.spawn(function()
    rec("t:send")
    b:send("hello")
    rec("t:sent")
  end)
  rec("m:select")
  local r = channel.select { a:case_receive(), b:case_receive() }
  rec("m:fired " .. show(r.channel == b, r.value, r.ok))
  -- the losing case was unlinked: a later send on a finds no stale receiver
  local r2 = channel.select { a:case_send("late"), default = true }
  rec("a has no receiver " .. tostring(r2.default))
  print(table.concat(log, ","))
end

function cases.select_send()
  -- ready: a receiver is waiting
  local ch = channel.new()
  local got = channel.new(1)
  coroutine.spawn(function() got:send((ch:receive())) end)
  time.sleep(0) -- let it block
  local r = channel.select { ch:case_send(5) }
  print("ready", r.channel == ch, r.ok, r.value, got:receive())
  -- blocking: the select waits until a receiver comes
  local log, rec = recorder()
  coroutine.spawn(function()
    rec("t:receive")
    rec("t:got " .. show(ch:receive()))
  end)
  rec("m:select")
  r = channel.select { ch:case_send(6) }
  rec("m:fired " .. show(r.channel == ch, r.ok))
  time.sleep(0)
  print(table.concat(log, ","))
  -- a send case on a closed channel fires with ok = false
  local c = channel.new()
  c:close()
  r = channel.select { c:case_send(1) }
  print("closed", r.channel == c, r.ok)
  -- a blocked select with a send case and a receive case; the receive case fires, and the
  -- send case's value does not reach anyone later
  local s, rcv = channel.new(), channel.new()
  coroutine.spawn(function() rcv:send("in") end)
  r = channel.select { s:case_send("out"), rcv:case_receive() }
  print("mixed", r.channel == rcv, r.value)
  r = channel.select { s:case_receive(), default = true }
  print("no stale sender", r.default)
end

function cases.select_timeout()
  local never = channel.new()
  local t0 = time.now()
  local timeout = time.after("30ms")
  local r = channel.select { never:case_receive(), timeout:case_receive() }
  local dt = time.now() - t0
  print("timeout fired", r.channel == timeout, type(r.value), r.ok)
  print("waited", dt >= 0.029, dt < 1)
  -- the value wins when it comes before the timeout
  local ch = channel.new()
  coroutine.spawn(function() time.sleep("5ms") ch:send("data") end)
  t0 = time.now()
  timeout = time.after("2s")
  r = channel.select { ch:case_receive(), timeout:case_receive() }
  print("data first", r.channel == ch, r.value, time.now() - t0 < 1)
end

function cases.select_errors()
  print("no cases", pcall(channel.select, {}))
  print("not a table", pcall(channel.select, nil))
  print("bad case", pcall(channel.select, { 42 }))
  print("case without channel", pcall(channel.select, { {} }))
end

function cases.many_tasks(...)
  local n = tonumber(... or 1000) or 1000
  local ch = channel.new()
  local done = channel.new()
  -- n producers into one unbuffered channel, n consumers out of it; each consumer hands
  -- what it got to main (tasks may be preempted anywhere: no shared counters)
  for _ = 1, n do
    coroutine.spawn(function() done:send((ch:receive())) end)
  end
  for i = 1, n do coroutine.spawn(function() ch:send(i) end) end
  local seen, distinct, sum = {}, 0, 0
  for _ = 1, n do
    local v = done:receive()
    if not seen[v] then distinct = distinct + 1 end
    seen[v] = true
    sum = sum + v
  end
  print("received", distinct, sum == n * (n + 1) / 2)
  -- n tasks blocked on one channel, released by close
  local gate = channel.new()
  local woke = channel.new(n)
  for _ = 1, n do coroutine.spawn(function() local _, ok = gate:receive() woke:send(ok) end) end
  time.sleep(0)
  gate:close()
  local falses = 0
  for _ = 1, n do if woke:receive() == false then falses = falses + 1 end end
  print("released", falses)
end

-- Blocking calls inside user coroutines pass through to the scheduler: the coroutine's
-- resumer never sees the host's yields.
function cases.in_coroutines()
  local ch = channel.new()
  coroutine.spawn(function()
    for i = 1, 3 do ch:send(i) end
  end)
  local co = coroutine.create(function(a)
    local got = {}
    for _ = 1, 3 do got[#got + 1] = ch:receive() end
    local b = coroutine.yield(a + #got)
    return table.concat(got, " "), b
  end)
  print("resume", coroutine.resume(co, 10))
  print("resume", coroutine.resume(co, "b"))
  print("status", coroutine.status(co))
  local gen = coroutine.wrap(function()
    for i = 1, 2 do
      local r = channel.select { time.after("1ms"):case_receive() }
      coroutine.yield(i, type(r.value))
    end
  end)
  print("wrap", gen())
  print("wrap", gen())
end

-- Where a block cannot yield (inside a C call), it raises instead of hanging.
function cases.block_in_c_call()
  local ch = channel.new(1)
  local ok, err = pcall(table.sort, { 2, 1 }, function(a, b) ch:receive() return a < b end)
  print("sort", ok, err)
  ok, err = pcall(string.gsub, "a", "a", function() return (ch:receive()) end)
  print("gsub", ok, err)
  -- the channel still works afterwards
  ch:send("fine")
  print("after", ch:receive())
end

-- An error in a spawned task fails the whole process with that error.
function cases.task_error()
  coroutine.spawn(function()
    time.sleep("5ms")
    error("task failed")
  end)
  channel.new():receive() -- blocks forever
end

-- When main returns, blocked tasks are dropped and the process ends.
function cases.main_returns()
  for _ = 1, 10 do coroutine.spawn(function() channel.new():receive() end) end
  time.sleep(0)
  return 3
end

-- coroutine.spawn(fn, ...) calls fn with the arguments, in order.
function cases.spawn_args()
  local ch = channel.new(3)
  coroutine.spawn(function(...) ch:send(select("#", ...) .. " " .. table.concat({ ... }, " ")) end, "a", "b", "c")
  coroutine.spawn(ch.send, ch, "method")
  coroutine.spawn(function(...) ch:send(select("#", ...)) end)
  print(ch:receive(), ch:receive(), ch:receive())
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
