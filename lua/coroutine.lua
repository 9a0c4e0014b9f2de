-- The sandbox's coroutine.resume and coroutine.wrap (host/vm/vm_coroutine.c binds them when a
-- process first reads `coroutine`). They are Lua because only Lua frames can yield and later
-- continue. step(co, ...) resumes co and returns first why it stopped (0: co itself yielded,
-- returned or failed; then ok and its values, as coroutine.resume). Any other reason is a host
-- yield inside co (a preemption or a blocking host call): settle then yields outward with it
-- (pass), and steps back into co with what the scheduler resumed the process with (back:
-- until then co is marked, and step refuses it to any other resumer).
-- Compiled stripped: errors are raised at the caller's level, so no position is lost.
local step, pass, back, create, type, error = ...

local function settle(co, why, ...)
  if why == 0 then return ... end
  return settle(co, back(co, pass(why, ...)))
end

local function resume(co, ...)
  if type(co) ~= 'thread' then
    error("bad argument #1 to 'resume' (coroutine expected)", 2)
  end
  return settle(co, step(co, ...))
end

local function unwrap(ok, ...)
  if ok then return ... end
  local e = ...
  error(e, type(e) == 'string' and 2 or 0)
end

local function wrap(f)
  if type(f) ~= 'function' then
    error("bad argument #1 to 'wrap' (function expected, got " .. type(f) .. ')', 2)
  end
  local co = create(f)
  return function(...) return unwrap(settle(co, step(co, ...))) end
end

return resume, wrap
