-- Each case prints what it observed; the spec compares the lines.
local cases = {}

function cases.now()
  local prev, back = time.now(), 0
  for _ = 1, 100000 do
    local t = time.now()
    if t < prev then back = back + 1 end
    prev = t
  end
  local t0 = time.now()
  time.sleep("10ms")
  local t1 = time.now()
  print("type", type(t0))
  print("went back", back)
  print("advances over a sleep", t1 - t0 >= 0.010)
end

function cases.sleep()
  for _, d in ipairs { "20ms", 0.02, "0.02s" } do
    local t0 = time.now()
    local r = { time.sleep(d) }
    local dt = time.now() - t0
    print(tostring(d), dt >= 0.020, dt < 0.5, #r)
  end
  local t0 = time.now()
  time.sleep(0)
  print("zero", time.now() - t0 < 0.5)
  for _, bad in ipairs { "soon", -1, "-5ms", "10 parsecs" } do
    local ok, err = pcall(time.sleep, bad)
    print("bad " .. tostring(bad), ok, err)
  end
  print("bad nil", pcall(time.sleep))
  print("bad table", pcall(time.sleep, {}))
end

function cases.after()
  local t0 = time.now()
  local ch = time.after("20ms")
  local v, ok = ch:receive()
  local dt = time.now() - t0
  print("value", type(v), ok, v >= t0 + 0.020, dt >= 0.020)
  -- exactly one value: nothing more arrives later
  time.sleep("40ms")
  local r = channel.select { ch:case_receive(), default = true }
  print("once", r.default)
  -- unread: a timer whose channel nobody reads is harmless
  time.after("1ms")
  time.sleep("10ms")
  print("bad", pcall(time.after, "later"))
end

function cases.ticker()
  local t = time.ticker("10ms")
  local ch = t:channel()
  print("same channel", rawequal(ch, t:channel()))
  local t0, prev, increasing = time.now(), 0, true
  for _ = 1, 5 do
    local v = ch:receive()
    increasing = increasing and v > prev
    prev = v
  end
  local dt = time.now() - t0
  print("five ticks", increasing, dt >= 0.045, dt < 2)
  t:stop()
  t:stop() -- twice is fine
  -- at most one tick was already on its way; after that, silence
  channel.select { ch:case_receive(), default = true }
  time.sleep("60ms")
  local r = channel.select { ch:case_receive(), default = true }
  print("stopped", r.default)
  print("zero period", pcall(time.ticker, 0))
  print("bad period", pcall(time.ticker, "often"))
  -- a slow reader loses ticks (the channel holds one) but the ticker keeps going
  local fast = time.ticker("2ms")
  time.sleep("30ms")
  local got = 0
  while channel.select { fast:channel():case_receive(), default = true }.channel do got = got + 1 end
  print("buffered ticks", got)
  local v = fast:channel():receive()
  print("still ticking", type(v))
  fast:stop()
end

function cases.many_sleepers(n, step_ms, slow)
  n = tonumber(n) or 1000
  step_ms = tonumber(step_ms) or 5 -- wider under sanitizers: creating the tasks takes longer
  slow = tonumber(slow) or 1
  local done = channel.new(n)
  local t0 = time.now()
  for i = 1, n do
    coroutine.spawn(function()
      local d = (i % 10) * step_ms -- 0..45 ms by default
      time.sleep(d / 1000)
      done:send(d)
    end)
  end
  local prev, ordered = -1, true
  for _ = 1, n do
    local d = done:receive()
    ordered = ordered and d >= prev
    prev = d
  end
  local dt = time.now() - t0
  print("woke", n, "in order", ordered, "concurrently", dt >= 9 * step_ms / 1000, dt < 2 * slow)
end

-- Processes that end with timers pending: by returning, by failing, by being killed; on a
-- one-worker host so their timers share one loop. This process keeps running past every
-- timer's due time.
function cases.ends_with_timers()
  local events = process.events()
  local inbox = process.inbox()
  for _, mode in ipairs { "return", "fail", "block" } do
    local pid = process.spawn_monitored("tm:leaver", "tm:single", mode, process.pid())
    local msg = inbox:receive()
    if mode == "block" then process.terminate(pid) end
    local ev = events:receive()
    print(mode, msg:topic(), ev.kind, ev.from == pid, ev.result.error ~= nil)
  end
  -- and one in this process: a timer whose channel is gone
  do time.after("5ms") end
  time.sleep("60ms")
  -- the host still runs processes and timers
  local t0 = time.now()
  time.sleep("10ms")
  print("after", time.now() - t0 >= 0.010)
  -- ending now leaves a sleeping task, an unread ticker and after
  coroutine.spawn(function() time.sleep("10s") end)
  time.ticker("1ms")
  time.after("10s")
end

-- time.sleep inside a user coroutine blocks the task, not the coroutine's resumer logic.
function cases.sleep_in_coroutine()
  local co = coroutine.wrap(function(d)
    local t0 = time.now()
    time.sleep(d)
    coroutine.yield(time.now() - t0 >= 0.015)
    time.sleep(d)
    return "done"
  end)
  print("first", co("15ms"))
  print("second", co())
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
