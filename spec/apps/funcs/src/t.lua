-- Helpers shared by the process specs' Lua side: bounded waits (never sleep-and-hope) and a
-- deterministic printer, so the spec can compare stdout exactly.
local t = {}

-- The next value on ch, or nil, "timeout" after `timeout` (default 2s).
function t.recv(ch, timeout)
  local r = channel.select { ch:case_receive(), time.after(timeout or 2):case_receive() }
  if r.channel == ch then return r.value end
  return nil, "timeout"
end

function t.event(timeout) return t.recv(process.events(), timeout) end
function t.msg(timeout) return t.recv(process.inbox(), timeout) end

-- What is already waiting on ch, without blocking: the value, or nil when nothing is.
function t.poll(ch)
  local r = channel.select { ch:case_receive(), default = true }
  if r.default then return nil end
  return r.value
end

-- The first line of a string (errors carry tracebacks).
function t.line(s)
  if type(s) ~= "string" then return s end
  return (s:match("^[^\n]*"))
end

-- A value as text: keys sorted, strings quoted, nested tables inline.
function t.show(v)
  local ty = type(v)
  if ty == "string" then return '"' .. v .. '"' end
  if ty ~= "table" then return tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  local parts = {}
  for _, k in ipairs(keys) do
    local ks = type(k) == "string" and k or "[" .. tostring(k) .. "]"
    parts[#parts + 1] = ks .. "=" .. t.show(v[k])
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- Several values as text, separated by spaces (nil shown as nil, count kept).
function t.shown(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = t.show((select(i, ...))) end
  return table.concat(out, " ")
end

-- An event as text, without tracebacks: kind from=<name> result/reason.
function t.event_text(ev, names)
  local from = names and names[ev.from] or ev.from
  local s = ev.kind .. " from=" .. tostring(from)
  if ev.result ~= nil then
    local r = {}
    for k, v in pairs(ev.result) do r[k] = t.line(v) end
    s = s .. " result=" .. t.show(r)
  end
  if ev.reason ~= nil then s = s .. " reason=" .. t.show(ev.reason) end
  return s
end

-- Waits for the message with this topic (others are an error); returns the message.
function t.expect(topic, timeout)
  local m, err = t.msg(timeout)
  if not m then error("waiting for " .. topic .. ": " .. err, 2) end
  if m:topic() ~= topic then error("expected " .. topic .. ", got " .. m:topic(), 2) end
  return m
end

-- Round trip through our own mailbox: when it returns, everything delivered to us before
-- this call has been handled (deliveries are handled in arrival order).
function t.barrier()
  process.send(process.pid(), "__barrier")
  t.expect("__barrier")
end

return t
