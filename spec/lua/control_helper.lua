-- Shared by the control and log specs: a `steward run` host in the background with its own
-- control socket (a temp path given through a host config file, so specs never share one),
-- its JSON event log, and the `steward` client and raw socket peer (spec_sock) to talk to it.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local ok_cjson, cjson = pcall(require, "cjson")
local json = ok_cjson and cjson or require("dkjson")
local assert = require("luassert")

local M = { json = json }

M.SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
M.DEADLINE = 15 * M.SLOW
M.APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/control"
M.spec_sock = (h.steward:match("^(.*)/[^/]*$") or ".") .. "/spec_sock"

local read = h.read_if

local Host = {}
Host.__index = Host
M.Host = Host

local live = {}

-- A fresh temp path (the file os.tmpname creates is removed: only the name is wanted).
function M.tmp(suffix)
  local p = os.tmpname()
  os.remove(p)
  return p .. (suffix or "")
end

-- A datagram listener at path (spec_sock, for sd_notify) that lives `seconds`; the file its
-- output goes to, one message a line, once it listens.
function M.listen_notify(path, seconds)
  local out = M.tmp(".notify")
  os.execute(("%s dgram %s %d >%s 2>&1 &"):format(h.quote(M.spec_sock), h.quote(path), seconds * M.SLOW, out))
  local deadline = rt.now() + M.DEADLINE
  while not (h.read_if(out) or ""):find("listening") do
    assert(rt.now() < deadline, "the datagram listener did not start: " .. (h.read_if(out) or ""))
    rt.sleep(0.01)
  end
  return out
end

-- opts: dir (app directory), socket (path; default a fresh temp one; false: DIR's default),
-- env (a "VAR=value ..." prefix), args (extra words after `run`), control (more lines of the
-- config's control: mapping, e.g. "  idle_timeout: 2s\n"; with a socket only), config (more
-- top-level lines of the config, e.g. "log:\n  dir: /tmp/x\n"; with a socket only), stderr (a
-- path for the host's stderr instead of the event log, e.g. "/dev/null").
function M.launch(opts)
  local self = setmetatable({ dir = opts.dir, err = M.tmp(".log"), pidfile = M.tmp(".pid"), rcfile = M.tmp(".rc"),
                              events = {}, offset = 0, partial = "" }, Host)
  local words = { "run", opts.dir, "--log-format", "json" }
  if opts.socket ~= false then
    self.socket = opts.socket or M.tmp(".sock")
    self.config = M.tmp(".yaml")
    local f = assert(io.open(self.config, "w"))
    f:write(("control:\n  socket: %q\n"):format(self.socket) .. (opts.control or "") .. (opts.config or ""))
    f:close()
    words[#words + 1] = "--config"
    words[#words + 1] = self.config
  else
    self.socket = opts.dir .. "/.steward.sock"
  end
  for _, a in ipairs(opts.args or {}) do words[#words + 1] = a end
  for i, w in ipairs(words) do words[i] = h.quote(w) end
  local cmd = ("(%s %s %s >/dev/null 2>%s </dev/null & echo $! >%s; wait $!; echo $? >%s) >/dev/null 2>&1 </dev/null &")
      :format(opts.env or "", h.quote(h.steward), table.concat(words, " "), opts.stderr or self.err, self.pidfile, self.rcfile)
  os.execute(cmd)
  local deadline = rt.now() + M.DEADLINE
  while not self.pid and rt.now() < deadline do
    self.pid = tonumber(read(self.pidfile) or "")
    if not self.pid then rt.sleep(0.005) end
  end
  assert(self.pid, "steward did not start")
  live[#live + 1] = self
  return self
end

function Host:alive()
  return read("/proc/" .. self.pid .. "/status") ~= nil and not read(self.rcfile)
end

function Host:log_text() return read(self.err) or "" end

-- The JSON events logged so far (parsed incrementally).
function Host:poll()
  local f = io.open(self.err, "rb")
  if not f then return self.events end
  f:seek("set", self.offset)
  local chunk = f:read("*a") or ""
  f:close()
  self.offset = self.offset + #chunk
  local text = self.partial .. chunk
  local last = 0
  for line, stop in text:gmatch("([^\n]*)\n()") do
    last = stop - 1
    local ok, e = pcall(json.decode, line)
    if not (ok and type(e) == "table") then e = { msg = "(text)", text = line } end
    e.i = #self.events + 1
    self.events[#self.events + 1] = e
  end
  self.partial = text:sub(last + 1)
  return self.events
end

-- Polls until fn(events) is truthy and returns it; fails with the log on timeout or exit.
function Host:wait(what, fn, seconds)
  local deadline = rt.now() + (seconds or M.DEADLINE)
  while true do
    local r = fn(self:poll())
    if r then return r end
    if not self:alive() then
      r = fn(self:poll())
      if r then return r end
      error(("steward exited before %s\n%s"):format(what, self:log_text()), 2)
    end
    if rt.now() > deadline then error(("timed out waiting for %s\n%s"):format(what, self:log_text()), 2) end
    rt.sleep(0.01)
  end
end

-- The index of the first event matching every field of pattern (after index `from`), or nil.
function M.find(events, pattern, from)
  for i = (from or 0) + 1, #events do
    local e, hit = events[i], true
    for k, v in pairs(pattern) do
      if e[k] ~= v then hit = false break end
    end
    if hit then return i end
  end
end

function Host:wait_event(pattern, from)
  return self:wait(json.encode(pattern), function(ev) return M.find(ev, pattern, from) end)
end

function Host:wait_exit(seconds)
  local deadline = rt.now() + (seconds or M.DEADLINE)
  while true do
    local code = tonumber(read(self.rcfile) or "")
    if code then
      self:poll()
      return code
    end
    if rt.now() > deadline then error("steward did not exit\n" .. self:log_text(), 2) end
    rt.sleep(0.01)
  end
end

function Host:signal(sig) os.execute("kill -" .. sig .. " " .. self.pid .. " 2>/dev/null") end

-- SIGTERM; the host must exit 0.
function Host:stop()
  self:signal("TERM")
  assert.are.equal(0, self:wait_exit(), self:log_text())
end

function Host:cleanup()
  if self.cleaned then return end
  self.cleaned = true
  if self:alive() then os.execute("kill -KILL " .. self.pid .. " 2>/dev/null") end
  for _, p in ipairs({ self.err, self.pidfile, self.rcfile, self.config }) do os.remove(p) end
  if self.socket and self.config then os.remove(self.socket) end
end

-- `steward CMD ... --control SOCKET` -> {code, stdout, stderr}.
function Host:ctl(...)
  local args = { ... }
  args[#args + 1] = "--control"
  args[#args + 1] = self.socket
  return h.run((table.unpack or unpack)(args))
end

-- JSON null (cjson.null, a userdata) as nil, all the way down.
local function denull(v)
  if v == json.null then return nil end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = denull(x) end
  end
  return v
end
M.decode = function(s) return denull(json.decode(s)) end

-- `steward status --json` decoded; asserts it answered unless `try` (then nil on failure).
function Host:status(try)
  local r = self:ctl("status", "--json")
  if try and r.code ~= 0 then return nil end
  assert.are.equal(0, r.code, r.stderr)
  return M.decode(r.stdout)
end

-- A socket file exists at path.
function M.is_socket(path)
  return os.execute("test -S " .. h.quote(path)) == true or os.execute("test -S " .. h.quote(path)) == 0
end

function Host:service(id)
  for _, s in ipairs(self:status().services) do
    if s.id == id then return s end
  end
end

-- Polls status until fn(services by id) is truthy.
function Host:wait_status(what, fn)
  return self:wait(what, function()
    local doc = self:status(true) -- nil until the host listens
    if not doc then return nil end
    local by = {}
    for _, s in ipairs(doc.services) do by[s.id] = s end
    return fn(by)
  end)
end

-- Raw bytes to the socket through spec_sock; returns the reply lines.
function M.raw(socket, bytes, env)
  local input = M.tmp(".in")
  local f = assert(io.open(input, "wb"))
  f:write(bytes)
  f:close()
  local out = M.tmp(".out")
  os.execute(("%s %s send %s <%s >%s 2>&1"):format(env or "", h.quote(M.spec_sock), h.quote(socket), input, out))
  local text = h.read(out)
  os.remove(input)
  os.remove(out)
  local lines = {}
  for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines, text
end

-- The "service state" events of id, as a list of state names.
function M.states(events, id)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == "service state" and e.service == id then out[#out + 1] = e.state end
  end
  return out
end

-- A copy of an app directory in a temp dir (to edit it, or to use its default socket path).
function M.copy_app(name)
  local dir = M.tmp(".app")
  os.execute(("mkdir -p %s && cp -r %s/. %s"):format(h.quote(dir), h.quote(M.APPS .. "/" .. name), h.quote(dir)))
  return dir
end

return M
