-- Reload end to end (docs/supervision.md, supervision scenarios 43-47): each spec writes an app
-- into a temporary directory, runs `steward run DIR --log-format json`, edits the files, sends
-- SIGHUP (or SIGUSR2) and asserts from the JSON event log what stopped, started and kept its
-- pid. Every run of a service logs "run" with its input.
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")
local with_app, count, find_state, logs, before = hh.with_app, hh.count, hh.find_state, hh.logs, hh.before

local WAITER = [[
namespace: app
entries:
  - name: waiter
    kind: process.lua
    source: |
      return function(tag)
        logger.info("run", { tag = tag })
        local events = process.events()
        repeat local e = events:receive() until e.kind == process.event.CANCEL
      end
]]

local function service(name, tag, deps, extra)
  return ([[
  - name: %s
    kind: process.service
    process: waiter
    input: [ %s ]
    lifecycle: { auto_start: true, depends_on: [ %s ] }
%s]]):format(name, tag, table.concat(deps or {}, ", "), extra or "")
end

local function write(dir, text)
  local f = assert(io.open(dir .. "/app.yaml", "w"))
  f:write(text)
  f:close()
end

local function with_reloadable(text, fn)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  write(dir, text)
  local ok, err = pcall(with_app, "reload", function(host) return fn(host, dir) end, dir)
  os.execute("rm -rf " .. h.quote(dir))
  if not ok then error(err, 0) end
end

local function host_events(ev, msg)
  local out = {}
  for _, e in ipairs(ev) do
    if e.msg == msg and not e.service then out[#out + 1] = e end
  end
  return out
end

local function up(ev, names)
  for _, n in ipairs(names) do
    if count(ev, n, "running") < 1 then return false end
  end
  return true
end

describe("reload", function()
  teardown(hh.cleanup_all)

  it("SIGHUP with a broken file logs every error with file:line and changes nothing (43)", function()
    local app = WAITER .. service("a", "one") .. service("b", "one", { "a" })
    with_reloadable(app, function(host, dir)
      host:wait("a and b up", function(ev) return up(ev, { "a", "b" }) end)
      write(dir, app .. "  - { name: bad, kind: process.service, process: nowhere, lifecycle: { auto_start: maybe } }\n")
      host:signal("HUP")
      host:wait("the rejection", function(ev) return #host_events(ev, "reload rejected: nothing changed") == 1 end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      local errors = host_events(ev, "reload error")
      assert.truthy(#errors >= 2, text)
      for _, e in ipairs(errors) do
        assert.truthy(e.error:find("app.yaml:%d+:%d+:"), text)
      end
      assert.are.equal(1, count(ev, "a", "running"), text)
      assert.are.equal(1, count(ev, "b", "running"), text)
      assert.are.equal(0, #host_events(ev, "reloaded"), text)
    end)
  end)

  it("SIGHUP after changing one service's input restarts it and its dependents only (44)", function()
    local app = WAITER .. service("a", "one") .. service("b", "one", { "a" }) .. service("c", "one")
    with_reloadable(app, function(host, dir)
      host:wait("all up", function(ev) return up(ev, { "a", "b", "c" }) end)
      write(dir, WAITER .. service("a", "two") .. service("b", "one", { "a" }) .. service("c", "one"))
      host:signal("HUP")
      host:wait("a and b again", function(ev) return count(ev, "a", "running") == 2 and count(ev, "b", "running") == 2 end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "c", "running"), text)
      local reloaded = host_events(ev, "reloaded")[1]
      assert.are.equal(1, reloaded.changed, text)
      -- dependents first down, then up in dependency order, with the new input
      before(find_state(ev, "b", "stopped"), find_state(ev, "a", "stopping"), text)
      before(find_state(ev, "a", "running", 2), find_state(ev, "b", "starting", 2), text)
      assert.are.equal("two", logs(ev, "a", "run")[2].tag, text)
    end)
  end)

  it("SIGHUP after a code change restarts the services that run it", function()
    local app = WAITER .. service("a", "one")
    with_reloadable(app, function(host, dir)
      host:wait("a up", function(ev) return up(ev, { "a" }) end)
      write(dir, (app:gsub('logger.info%("run"', 'logger.info("run", { tag = "new code" }) logger.info("old"')))
      host:signal("HUP")
      host:wait("a again", function(ev) return count(ev, "a", "running") == 2 end)
      local ev = host:stop()
      assert.are.equal("new code", logs(ev, "a", "run")[2].tag, host:log_text())
    end)
  end)

  it("SIGHUP after removing a service stops it; an added auto_start one starts (45)", function()
    local app = WAITER .. service("a", "one") .. service("gone", "one", { "a" })
    with_reloadable(app, function(host, dir)
      host:wait("a and gone up", function(ev) return up(ev, { "a", "gone" }) end)
      write(dir, WAITER .. service("a", "one") .. service("fresh", "one", { "a" }))
      host:signal("HUP")
      host:wait("gone stopped, fresh up", function(ev) return count(ev, "gone", "stopped") == 1 and up(ev, { "fresh" }) end)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "a", "running"), text)
      local reloaded = host_events(ev, "reloaded")[1]
      assert.are.equal(1, reloaded.added, text)
      assert.are.equal(1, reloaded.removed, text)
      assert.are.equal(0, reloaded.changed, text)
    end)
  end)

  it("SIGHUP after changing a policy: the running process sees the new decision at once, without a restart (46)", function()
    local function app(effect)
      return ([[
namespace: app
entries:
  - name: checker
    kind: process.lua
    source: |
      -- Checks in a tight loop and logs every change of decision with how many checks it made.
      return function()
        local last, n = nil, 0
        while true do
          local now = security.check("data.read", "app.data:x")
          n = n + 1
          if now ~= last then logger.info("decision", { decision = now, checks = n }) last = now end
          if n %% 1000 == 0 then time.sleep("1ms") end
        end
      end
  - name: read_data
    kind: security.policy
    policy: { actions: data.read, resources: "app.data:*", effect: %s }
  - name: reader
    kind: process.service
    process: checker
    lifecycle:
      auto_start: true
      security: { actor: { id: "service:reader" }, policies: [ read_data ] }
]]):format(effect)
    end
    with_reloadable(app("allow"), function(host, dir)
      host:wait("the first decision", function(ev) return #logs(ev, "reader", "decision") == 1 end)
      write(dir, app("deny"))
      host:signal("HUP")
      host:wait("the new decision", function(ev) return #logs(ev, "reader", "decision") == 2 end)
      host:hold(0.1)
      local ev = host:stop()
      local text = host:log_text()
      local d = logs(ev, "reader", "decision")
      assert.are.equal(2, #d, text) -- old, then new: never back, never anything else
      assert.are.equal("allow", d[1].decision, text)
      assert.are.equal("deny", d[2].decision, text)
      assert.are.equal(d[1].pid, d[2].pid, text) -- the same process: no restart
      assert.are.equal(1, count(ev, "reader", "running"), text)
      assert.are.equal(0, host_events(ev, "reloaded")[1].changed, text)
    end)
  end)

  it("SIGUSR2 restarts every service in dependency order (47)", function()
    local app = WAITER .. service("a", "one") .. service("b", "one", { "a" }) .. service("c", "one", { "b" })
    with_reloadable(app, function(host)
      host:wait("all up", function(ev) return up(ev, { "a", "b", "c" }) end)
      host:signal("USR2")
      host:wait("all again", function(ev) return count(ev, "c", "running") == 2 end)
      local ev = host:stop()
      local text = host:log_text()
      before(find_state(ev, "c", "stopped"), find_state(ev, "b", "stopping"), text)
      before(find_state(ev, "b", "stopped"), find_state(ev, "a", "stopping"), text)
      before(find_state(ev, "a", "running", 2), find_state(ev, "b", "starting", 2), text)
      before(find_state(ev, "b", "running", 2), find_state(ev, "c", "starting", 2), text)
      assert.are.equal(3, host_events(ev, "reloaded")[1].changed, text)
    end)
  end)
end)
