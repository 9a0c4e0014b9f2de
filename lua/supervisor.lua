-- The `supervisor` module (docs/lua-api.md "supervisor", docs/supervision.md "Supervisors in
-- Lua"): supervisors of dynamic children, as OTP's DynamicSupervisor and Akka's parents.
-- A supervisor is a task of the calling process, so `decide` is an ordinary closure; the task
-- owns the supervisor's state and serves the caller's requests (sup:start_child, ...) over a
-- channel, one at a time. Its children's EXITs reach it through a private channel (the host
-- routes them there: host/lua_api/api_supervisor.c), never the caller's events. A child whose
-- caller ends is killed with it. Past `intensity` restarts within `period`, or when `decide`
-- says "escalate", it stops every child and fails its caller as a link would: a LINK_DOWN
-- event if the caller traps links, else the caller's own failure.
-- The host opens it with its primitives (exits, spawn, cancel, kill, traps_links, seconds)
-- and the host modules and base functions it uses, captured at open.
local prim, G = ...
local process, channel, time, logger, errors = G.process, G.channel, G.time, G.logger, G.errors
local spawn_task, random, min = G.coroutine.spawn, G.math.random, G.math.min
local format, insert, remove = G.string.format, G.table.insert, G.table.remove
local type, tostring, pairs, ipairs, pcall, error, select, unpack, setmetatable =
  G.type, G.tostring, G.pairs, G.ipairs, G.pcall, G.error, G.select, G.unpack, G.setmetatable

local DEFAULTS = {
  strategy = 'one_for_one', intensity = 3, period = 5, stop_timeout = 5, max_children = 1000,
}
local RESTART_DEFAULTS = {
  policy = 'on_failure', initial_delay = 1, max_delay = 90, backoff_factor = 2, jitter = 0.1,
  stable_threshold = 5,
}
local STRATEGIES = { one_for_one = true, one_for_all = true, rest_for_one = true }
local POLICIES = { on_failure = true, always = true, never = true }

-- ---- options ----

-- A bad option: raised as a table that M.start turns into an error at its caller's level.
local BAD = {}
local function bad(fn, why) error({ [BAD] = "bad argument #1 to '" .. fn .. "' (" .. why .. ")" }) end

local function number_field(fn, t, k, lo)
  local v = t[k]
  if type(v) ~= 'number' or v ~= v or v < lo or v == 1 / 0 then
    bad(fn, format("field '%s' must be a number >= %s", k, tostring(lo)))
  end
  return v
end

local function duration_field(fn, t, k)
  local s = prim.seconds(t[k])
  if not s then bad(fn, "field '" .. k .. "' must be a duration (\"250ms\", \"1.5s\" or seconds)") end
  return s
end

local restart_readers = {
  policy = function(t)
    if not POLICIES[t.policy] then bad('start', "field 'restart.policy' must be on_failure, always or never") end
    return t.policy
  end,
  initial_delay = function(t) return duration_field('start', t, 'initial_delay') end,
  max_delay = function(t) return duration_field('start', t, 'max_delay') end,
  stable_threshold = function(t) return duration_field('start', t, 'stable_threshold') end,
  backoff_factor = function(t) return number_field('start', t, 'backoff_factor', 1) end,
  jitter = function(t)
    local j = number_field('start', t, 'jitter', 0)
    if j > 1 then bad('start', "field 'jitter' must be a number >= 0 and <= 1") end
    return j
  end,
}

local function read_restart(r)
  local out = {}
  for k, v in pairs(RESTART_DEFAULTS) do out[k] = v end
  if r == nil then return out end
  if type(r) ~= 'table' then bad('start', "field 'restart' must be a table") end
  for k in pairs(r) do
    local read = restart_readers[k]
    if not read then
      bad('start', "unknown field 'restart." .. tostring(k) ..
        "' (expected policy, initial_delay, max_delay, backoff_factor, jitter or stable_threshold)")
    end
    out[k] = read(r)
  end
  return out
end

local readers = {
  strategy = function(o)
    if not STRATEGIES[o.strategy] then
      bad('start', "field 'strategy' must be one_for_one, one_for_all or rest_for_one")
    end
    return o.strategy
  end,
  intensity = function(o) return number_field('start', o, 'intensity', 0) end,
  period = function(o) return duration_field('start', o, 'period') end,
  stop_timeout = function(o) return duration_field('start', o, 'stop_timeout') end,
  max_children = function(o) return number_field('start', o, 'max_children', 1) end,
  name = function(o)
    if type(o.name) ~= 'string' then bad('start', "field 'name' must be a string") end
    return o.name
  end,
  decide = function(o)
    if type(o.decide) ~= 'function' then bad('start', "field 'decide' must be a function") end
    return o.decide
  end,
  restart = function(o) return read_restart(o.restart) end,
}

local function read_options(o)
  if o == nil then o = {} end
  if type(o) ~= 'table' then bad('start', 'table expected, got ' .. type(o)) end
  local opts = { restart = read_restart(nil) }
  for k, v in pairs(DEFAULTS) do opts[k] = v end
  for k in pairs(o) do
    local read = readers[k]
    if not read then
      bad('start', "unknown field '" .. tostring(k) ..
        "' (expected strategy, intensity, period, restart, decide, stop_timeout, max_children or name)")
    end
    opts[k] = read(o)
  end
  return opts
end

-- ---- the supervisor's state (touched only by its task) ----

-- A child: {key, id, args (packed), pid, handle, state, restarts, attempt, started, due}.
-- state: running | restarting (waiting for its backoff) | stopping | stopped | failed.

-- One "child state" record per transition (a warning when it follows a failure).
local function log_child(s, c, fields, failure)
  fields.supervisor, fields.child, fields.state, fields.restarts = s.name, c.key, c.state, c.restarts
  fields.child_pid = c.pid
  if failure or c.state == 'failed' then logger.warn('child state', fields) else logger.info('child state', fields) end
end

local function error_text(err)
  if type(err) == 'table' then return tostring(err.message) end
  local s = tostring(err)
  return s:match('^(.-)\nstack traceback:') or s
end

-- Backoff as for services (docs/supervision.md "Backoff"): the n-th restart in a row waits
-- min(initial * factor^(n-1), max) * (1 + jitter * u), u uniform in [-1, 1].
local function backoff(r, n)
  local d = min(r.initial_delay * r.backoff_factor ^ (n - 1), r.max_delay)
  return d * (1 + r.jitter * (random() * 2 - 1))
end

-- The restart window: a ring of the last `intensity` restart times. True when this restart is
-- one more than `intensity` within `period` (it is then not recorded).
local function window_over(s, now)
  if s.intensity == 0 then return true end
  local w = s.window
  if #w >= s.intensity then
    if now - w[s.window_head] < s.period then return true end
    w[s.window_head] = now
    s.window_head = s.window_head % s.intensity + 1
  else
    insert(w, now)
  end
  return false
end

local function start(s, c)
  local pid, handle = prim.spawn(c.id, s.exits, unpack(c.args, 1, c.args.n))
  if not pid then return nil, handle end
  s.by_pid[pid] = c
  c.pid, c.handle, c.state, c.started, c.due = pid, handle, 'running', time.now(), nil
  log_child(s, c, {})
  return pid
end

-- Waits for the EXIT of c (stopping); other EXITs that come meanwhile are kept for later.
local function await_exit(s, c, timeout)
  for i, ev in ipairs(s.held) do
    if ev.pid == c.pid then remove(s.held, i) return true end
  end
  local deadline = timeout and time.after(timeout)
  while true do
    local r
    if deadline then
      r = channel.select { s.exits:case_receive(), deadline:case_receive() }
      if r.channel == deadline then return false end
    else
      r = { value = s.exits:receive() }
    end
    if r.value.pid == c.pid then return true end
    insert(s.held, r.value)
  end
end

-- Stops a running child: CANCEL, then a kill after stop_timeout (0: at once). Its new state is
-- `state`; a child waiting to restart just stops waiting.
local function stop_child(s, c, state, reason)
  if c.state == 'running' then
    c.state = 'stopping'
    if s.stop_timeout > 0 and prim.cancel(c.handle) and await_exit(s, c, s.stop_timeout) then
      -- ended after its CANCEL
    else
      prim.kill(c.handle)
      await_exit(s, c, nil)
    end
    s.by_pid[c.pid] = nil
    c.pid, c.handle = nil, nil
  end
  c.due = nil
  c.state = state
  log_child(s, c, { reason = reason or 'stopped by its supervisor' })
end

local function stop_all(s, state)
  for i = #s.children, 1, -1 do
    local c = s.children[i]
    if c.state == 'running' or c.state == 'restarting' then stop_child(s, c, state) end
  end
end

local function shut(s, why)
  s.running = false
  s.requests:close()
  logger.error('supervisor failed', { supervisor = s.name, reason = why })
end

-- Past the intensity, or "escalate": stop the children, then fail the caller as a link would.
local function escalate(s, why)
  stop_all(s, 'stopped')
  local reason = (s.name and 'supervisor ' .. s.name or 'supervisor') .. ': ' .. why
  shut(s, reason)
  if prim.traps_links() then
    process.events():send { kind = process.event.LINK_DOWN, from = process.pid(), supervisor = s.name,
      result = { error = reason } }
    return
  end
  error(reason, 0)
end

-- The children a failure of c restarts besides c, by strategy, in start order.
local function siblings(s, c)
  if s.strategy == 'one_for_one' then return {} end
  local out, after = {}, false
  for _, o in ipairs(s.children) do
    if o == c then after = true
    elseif (s.strategy == 'one_for_all' or after) and (o.state == 'running' or o.state == 'restarting') then
      insert(out, o)
    end
  end
  return out
end

local function schedule_restart(s, c, reason)
  local now = time.now()
  if window_over(s, now) then
    escalate(s, format('more than %d restarts in %gs (child %s: %s)', s.intensity, s.period, c.key,
      error_text(reason)))
    return
  end
  if c.started and now - c.started >= s.restart.stable_threshold then c.attempt = 0 end
  c.attempt = c.attempt + 1
  local delay = backoff(s.restart, c.attempt)
  c.state, c.due = 'restarting', now + delay
  log_child(s, c, { reason = error_text(reason), next_attempt = delay }, reason ~= 'returned')
  local others = siblings(s, c)
  for i = #others, 1, -1 do stop_child(s, others[i], 'restarting', 'restarting with ' .. c.key) end
  for _, o in ipairs(others) do o.due = c.due end
end

-- What a failure leads to: decide(err, key) if given, else "stop" for a non-retryable error
-- and "restart" otherwise.
local function decision(s, c, err)
  if not s.decide then
    if errors.is(err) and err.retryable == false then return 'stop' end
    return 'restart'
  end
  s.in_decide = true
  local ok, d = pcall(s.decide, type(err) == 'string' and error_text(err) or err, c.key)
  s.in_decide = false
  if not ok then return 'escalate', 'decide failed: ' .. error_text(d) end
  if d ~= 'restart' and d ~= 'stop' and d ~= 'escalate' then
    return 'escalate', 'decide returned ' .. tostring(d) .. ' (expected "restart", "stop" or "escalate")'
  end
  return d
end

-- A child ended by itself (or could not be started again) with result {value | error}.
local function on_end(s, c, result)
  s.by_pid[c.pid or ''] = nil
  local err = result and result.error
  c.pid, c.handle, c.state = nil, nil, err == nil and 'stopped' or 'failed' -- until decided
  if err == nil then
    if s.restart.policy == 'always' then return schedule_restart(s, c, 'returned') end
    c.state = 'stopped'
    return log_child(s, c, { reason = 'returned' })
  end
  if s.restart.policy == 'never' then
    c.state = 'failed'
    return log_child(s, c, { reason = error_text(err) })
  end
  local d, why = decision(s, c, err)
  if d == 'restart' then return schedule_restart(s, c, err) end
  if d == 'escalate' then return escalate(s, why or format('child %s escalated: %s', c.key, error_text(err))) end
  c.state = 'failed'
  log_child(s, c, { reason = error_text(err) })
end

local function on_exit(s, ev)
  local c = s.by_pid[ev.pid]
  if c and c.state == 'running' then on_end(s, c, ev.result or {}) end
end

-- Starts, in start order, the children whose restart is due; a start that fails is a failure
-- of that child (its strategy, the window and backoff apply).
local function run_due(s)
  local now = time.now()
  for _, c in ipairs(s.children) do
    if not s.running then return end
    if c.state == 'restarting' and c.due and c.due <= now then
      c.restarts = c.restarts + 1
      local pid, err = start(s, c)
      if not pid then on_end(s, c, { error = err }) end
    end
  end
end

local function next_due(s)
  local due
  for _, c in ipairs(s.children) do
    if c.state == 'restarting' and c.due and (not due or c.due < due) then due = c.due end
  end
  return due
end

-- ---- requests from the caller (served by the supervisor's task) ----

local function find(s, key)
  local c = s.by_key[key]
  if not c then return nil, 'no such child' end
  return c
end

local ops = {}

function ops.start_child(s, id, args)
  if #s.children >= s.max_children then
    return nil, format('too many children (at most %d)', s.max_children)
  end
  local c = { key = id .. '#' .. (s.seq + 1), id = id, args = args, restarts = 0, attempt = 0 }
  local pid, err = start(s, c)
  if not pid then return nil, err end
  s.seq = s.seq + 1
  insert(s.children, c)
  s.by_key[c.key] = c
  return c.key
end

function ops.terminate_child(s, key)
  local c, err = find(s, key)
  if not c then return nil, err end
  if c.state == 'running' or c.state == 'restarting' then stop_child(s, c, 'stopped') end
  return true
end

function ops.restart_child(s, key)
  local c, err = find(s, key)
  if not c then return nil, err end
  if c.state == 'running' or c.state == 'restarting' then stop_child(s, c, 'stopped') end
  c.restarts, c.attempt = c.restarts + 1, 0
  local pid, serr = start(s, c)
  if not pid then
    c.state = 'failed'
    log_child(s, c, { reason = serr })
    return nil, serr
  end
  return pid
end

function ops.delete_child(s, key)
  local c, err = find(s, key)
  if not c then return nil, err end
  if c.state == 'running' or c.state == 'restarting' then stop_child(s, c, 'stopped') end
  s.by_key[key] = nil
  for i, o in ipairs(s.children) do
    if o == c then remove(s.children, i) break end
  end
  return true
end

function ops.which_children(s)
  local out = {}
  for i, c in ipairs(s.children) do
    out[i] = { key = c.key, id = c.id, pid = c.pid, state = c.state, restarts = c.restarts }
  end
  return out
end

function ops.count_children(s)
  local n = { total = 0, running = 0, restarting = 0, stopping = 0, stopped = 0, failed = 0 }
  for _, c in ipairs(s.children) do
    n.total = n.total + 1
    n[c.state] = n[c.state] + 1
  end
  return n
end

function ops.stop(s)
  stop_all(s, 'stopped')
  s.running = false
  s.requests:close()
  logger.info('supervisor stopped', { supervisor = s.name })
  return true
end

local function serve(s, req)
  local ok, a, b = pcall(ops[req.op], s, req[1], req[2])
  if not ok then a, b = nil, error_text(a) end
  req.reply:send { a, b }
end

-- ---- the task ----

local function loop(s)
  local timer, timer_at
  while s.running do
    while s.held[1] and s.running do on_exit(s, remove(s.held, 1)) end
    if not s.running then break end
    local due, now = next_due(s), time.now()
    if due and due <= now then
      run_due(s) -- no timer for a restart already due (zero backoff)
    else
      local cases = { s.exits:case_receive(), s.requests:case_receive() }
      if due and due ~= timer_at then timer, timer_at = time.after(due - now), due end
      if due then cases[3] = timer:case_receive() end
      local r = channel.select(cases)
      if r.channel == s.exits then on_exit(s, r.value)
      elseif r.channel == s.requests then
        if r.ok then serve(s, r.value) end
      else
        timer_at = nil
        run_due(s)
      end
    end
  end
end

-- ---- the caller's handle ----

local Sup = {}
Sup.__index = Sup
Sup.__metatable = false

local function call(self, op, a, b)
  local s = self._s
  if s.in_decide then error('cannot call the supervisor from its decide function', 2) end -- methods tail-call
  if not s.running then return nil, 'supervisor is not running' end
  local reply = channel.new(1)
  if not s.requests:send { op = op, reply = reply, a, b } then return nil, 'supervisor is not running' end
  local r = reply:receive()
  return r[1], r[2]
end

function Sup:start_child(id, ...)
  if type(id) ~= 'string' then
    error("bad argument #1 to 'start_child' (string expected, got " .. type(id) .. ')', 2)
  end
  return call(self, 'start_child', id, { n = select('#', ...), ... })
end

function Sup:terminate_child(key) return call(self, 'terminate_child', key) end
function Sup:restart_child(key) return call(self, 'restart_child', key) end
function Sup:delete_child(key) return call(self, 'delete_child', key) end
function Sup:which_children() return call(self, 'which_children') end
function Sup:count_children() return call(self, 'count_children') end

function Sup:stop()
  if not self._s.running then return true end
  local ok, err = call(self, 'stop')
  if ok == nil and err == 'supervisor is not running' then return true end
  return ok, err
end

local M = {}

function M.start(o)
  local ok, opts = pcall(read_options, o)
  if not ok then
    if type(opts) == 'table' and opts[BAD] then error(opts[BAD], 2) end
    error(opts, 0)
  end
  local s = {
    name = opts.name, strategy = opts.strategy, intensity = opts.intensity, period = opts.period,
    stop_timeout = opts.stop_timeout, max_children = opts.max_children, restart = opts.restart,
    decide = opts.decide, children = {}, by_key = {}, by_pid = {}, held = {}, window = {},
    window_head = 1, seq = 0, running = true, exits = prim.exits(), requests = channel.new(),
  }
  spawn_task(loop, s)
  logger.info('supervisor started', { supervisor = s.name, strategy = s.strategy })
  return setmetatable({ _s = s }, Sup)
end

return M
