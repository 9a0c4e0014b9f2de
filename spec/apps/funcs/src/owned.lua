-- A caller's functions do not outlive it: for each way the caller ends while a call runs,
-- the function's process (which reports its pid) must end too; we monitor it.
local t = require("t")

local function fn_pid()
  local m = t.expect("fn", 5)
  return m:data()
end

local function ended(pid)
  process.monitor(pid)
  local ev = t.event(5)
  return ev and ev.kind == "exit" and ev.from == pid
end

return function()
  process.registry.register("watcher")
  -- killed while blocked in funcs.call
  local caller = process.spawn("mid_call", nil, "block")
  local fn = fn_pid()
  process.terminate(caller)
  print("killed caller", ended(fn))
  -- returned while a task waits in funcs.call
  caller = process.spawn("mid_call", nil, "task")
  fn = fn_pid()
  process.send(caller, "go")
  print("returned with a waiting task", ended(fn))
  -- returned with an async call in flight
  caller = process.spawn("mid_call", nil, "async")
  fn = fn_pid()
  process.send(caller, "go")
  print("returned with an async call", ended(fn))
  -- the host is still fine
  print(funcs.call("add", 20, 22))
end
