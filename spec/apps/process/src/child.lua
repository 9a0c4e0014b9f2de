-- The other side of most specs: child(parent, mode, ...).
local t = require("t")

local modes = {}

-- Returns its arguments after the mode.
function modes.ret(parent, ...) return ... end

-- Raises its argument.
function modes.fail(parent, msg) error(msg, 0) end

-- Sends its arguments back to parent, as they arrived.
function modes.echo(parent, ...)
  process.send(parent, "args", select("#", ...), ...)
end

-- Tells parent it is up, then obeys messages until told to end.
function modes.wait(parent)
  process.send(parent, "up", process.pid())
  while true do
    local m = process.inbox():receive()
    local topic = m:topic()
    if topic == "return" then return m:data()
    elseif topic == "fail" then error(m:data(), 0)
    elseif topic == "fail_obj" then error(errors.new(m:data()))
    elseif topic == "return_err" then return nil, m:data()
    elseif topic == "ping" then process.send(m:from(), "pong", m:data())
    elseif topic == "spin" then while true do end
    end
  end
end

-- Spins at once without ever blocking.
function modes.spin(parent)
  process.send(parent, "up", process.pid())
  while true do end
end

-- Registers a name for itself, reports the result, then waits like `wait`.
function modes.register(parent, name)
  local ok, err = process.registry.register(name)
  process.send(parent, "registered", ok, err)
  return modes.wait(parent)
end

-- Waits for its CANCEL event, reports it, and returns.
function modes.cancelable(parent)
  process.send(parent, "up", process.pid())
  local ev = process.events():receive()
  process.send(parent, "event", ev.kind, ev.from, ev.reason)
  return "cancelled"
end

-- Sends n numbered messages to dest.
function modes.sender(parent, dest, n)
  for i = 1, n do assert(process.send(dest, "seq", i)) end
  process.send(parent, "sent", n)
end

-- Monitors target, reports when it is watching, and tells parent when target ended.
function modes.watch(parent, target)
  process.monitor(target)
  process.send(parent, "watching")
  local ev = t.event(5)
  process.send(parent, "down", ev and ev.kind, ev and ev.from)
end

-- Links to parent, then fails or returns when told (via `wait`).
function modes.linker(parent)
  assert(process.link(parent))
  return modes.wait(parent)
end

-- Spawns a linked grandchild that waits, reports both pids, then obeys like `wait`.
function modes.link_pair(parent)
  local b = process.spawn_linked("child", nil, process.pid(), "wait")
  t.expect("up")
  process.send(parent, "pair", process.pid(), b)
  return modes.wait(parent)
end

return function(parent, mode, ...)
  local f = modes[mode]
  if not f then error("unknown mode " .. tostring(mode)) end
  return f(parent, ...)
end
