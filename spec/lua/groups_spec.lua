-- service.group end to end (docs/supervision.md, supervision scenarios 20-29): each spec writes a small
-- app into a temporary directory, runs `steward run DIR --log-format json`, and asserts order
-- and counts from the JSON event log. Members ask a root-level "counter" service which run of
-- theirs this is, so a member can crash on chosen runs (after `after` ms) and stay up on the
-- others; every run logs "run" with its number and pid.
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")
local with_app, state_names, count, find_state = hh.with_app, hh.state_names, hh.count, hh.find_state
local logs, before, states = hh.logs, hh.before, hh.states

local COMMON = [[
namespace: app
entries:
  - name: counter_process
    kind: process.lua
    source: |
      return function()
        process.registry.register("counter")
        process.ready()
        local runs, inbox, events = {}, process.inbox(), process.events()
        while true do
          local r = channel.select { inbox:case_receive(), events:case_receive() }
          if r.channel == events then
            if r.value.kind == process.event.CANCEL then return end
          else
            local key = r.value:data()
            runs[key] = (runs[key] or 0) + 1
            process.send(r.value:from(), "count", runs[key])
          end
        end
      end
  - name: counter
    kind: process.service
    process: counter_process
    lifecycle: { ready: notify, start_timeout: 5s }

  # input: [name, crash on runs up to this one (or "return" on run 1), after ms]
  - name: member_process
    kind: process.lua
    source: |
      return function(name, crash_runs, after)
        process.send("counter", "next", name)
        local n = process.inbox():receive():data()
        logger.info("run", { n = n })
        if crash_runs == "return" and n == 1 then return end
        if type(crash_runs) == "number" and n <= crash_runs then
          time.sleep(after .. "ms")
          error("crash " .. n)
        end
        local events = process.events()
        repeat local e = events:receive() until e.kind == process.event.CANCEL
      end
]]

-- A member service: crash = runs that crash (number) or "return"; policy defaults to always.
local function member(name, crash, opts)
  opts = opts or {}
  local input = ("[ %s, %s, %d ]"):format(name, crash == nil and "0" or (type(crash) == "number" and crash or '"' .. crash .. '"'),
                                          opts.after or 30)
  return ([[
  - name: %s
    kind: process.service
    process: member_process
    input: %s
    lifecycle:
      depends_on: [ counter ]
      restart: { policy: %s, initial_delay: %s, jitter: 0 }
]]):format(name, input, opts.policy or "always", opts.delay or "10ms")
end

local function group(name, strategy, children, opts)
  opts = opts or {}
  return ([[
  - name: %s
    kind: service.group
    strategy: %s
    intensity: %d
    period: %s
    children: [ %s ]
    lifecycle:
      auto_start: %s
      restart: { policy: %s, initial_delay: %s, jitter: 0 }
]]):format(name, strategy, opts.intensity or 10, opts.period or "5s", table.concat(children, ", "),
           opts.auto_start == false and "false" or "true", opts.policy or "on_failure", opts.delay or "10ms")
end

-- Writes the app and runs fn(host) on it.
local function with_groups(yaml, fn)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local f = assert(io.open(dir .. "/app.yaml", "w"))
  f:write(COMMON, yaml)
  f:close()
  local ok, err = pcall(with_app, "groups", fn, dir)
  os.execute("rm -rf " .. h.quote(dir))
  if not ok then error(err, 0) end
end

local function runs(ev, name) return #logs(ev, name, "run") end

-- The log index of the nth "running" of each name, in order, must increase.
local function in_order(ev, names, nth, state, text)
  for k = 2, #names do
    before(find_state(ev, names[k - 1], state or "running", nth), find_state(ev, names[k], state or "running", nth), text)
  end
end

describe("service.group", function()
  teardown(hh.cleanup_all)

  it("one_for_one: only the crashed child restarts; its siblings keep their pids (20)", function()
    with_groups(member("a") .. member("b", 1) .. member("c") .. group("g", "one_for_one", { "a", "b", "c" }), function(host)
      host:wait("b's second run", function(ev) return runs(ev, "b") == 2 and count(ev, "b", "running") == 2 end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, runs(ev, "a"), text)
      assert.are.equal(1, runs(ev, "c"), text)
      assert.are.equal(1, count(ev, "a", "running"), text)
      assert.are.equal(1, count(ev, "c", "running"), text)
      assert.are.equal(1, count(ev, "b", "failed"), text)
    end)
  end)

  it("one_for_all: c then a stop, then a, b, c start in order with new pids (21)", function()
    with_groups(member("a") .. member("b", 1) .. member("c") .. group("g", "one_for_all", { "a", "b", "c" }), function(host)
      host:wait("all second runs", function(ev)
        return count(ev, "a", "running") == 2 and count(ev, "b", "running") == 2 and count(ev, "c", "running") == 2
      end)
      local ev = host:stop()
      local text = host:log_text()
      local b_failed = find_state(ev, "b", "failed")
      before(b_failed, find_state(ev, "c", "stopping"), text)
      before(find_state(ev, "c", "stopped"), find_state(ev, "a", "stopping"), text)
      before(find_state(ev, "a", "stopped"), find_state(ev, "a", "running", 2), text)
      in_order(ev, { "a", "b", "c" }, 2, "running", text)
      local a_runs, c_runs = logs(ev, "a", "run"), logs(ev, "c", "run")
      assert.are_not.equal(a_runs[1].pid, a_runs[2].pid, text)
      assert.are_not.equal(c_runs[1].pid, c_runs[2].pid, text)
    end)
  end)

  it("rest_for_one: c stops; b then c start; a untouched (22)", function()
    with_groups(member("a") .. member("b", 1) .. member("c") .. group("g", "rest_for_one", { "a", "b", "c" }), function(host)
      host:wait("c's second run", function(ev) return count(ev, "c", "running") == 2 and count(ev, "b", "running") == 2 end)
      host:hold(0.1)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "a", "running"), text)
      before(find_state(ev, "b", "failed"), find_state(ev, "c", "stopping"), text)
      in_order(ev, { "b", "c" }, 2, "running", text)
    end)
  end)

  it("children start in list order, each after the previous runs, and stop in reverse (23)", function()
    local names = { "zeta", "mu", "alpha", "omega", "beta" }
    local yaml = ""
    for _, n in ipairs(names) do yaml = yaml .. member(n) end
    with_groups(yaml .. group("g", "one_for_one", names), function(host)
      host:wait("all running", function(ev) return count(ev, "beta", "running") == 1 end)
      local ev = host:stop()
      local text = host:log_text()
      in_order(ev, names, 1, "running", text)
      for k = 2, #names do -- each starts only after the previous runs
        before(find_state(ev, names[k - 1], "running"), find_state(ev, names[k], "starting"), text)
      end
      local reversed = {}
      for k = #names, 1, -1 do reversed[#reversed + 1] = names[k] end
      in_order(ev, reversed, 1, "stopping", text)
      for k = 2, #reversed do
        before(find_state(ev, reversed[k - 1], "stopped"), find_state(ev, reversed[k], "stopping"), text)
      end
    end)
  end)

  it("intensity 2 in 1s: the third restart fails the group; the root restarts it after its backoff (24)", function()
    local yaml = member("a") .. member("b", 3, { after = 10, delay = "5ms" }) .. member("c") ..
                 group("g", "one_for_one", { "a", "b", "c" }, { intensity = 2, period = "1s", delay = "200ms" })
    with_groups(yaml, function(host)
      host:wait("the group back up", function(ev)
        return count(ev, "g", "failed") == 1 and count(ev, "b", "running") == 4 and count(ev, "c", "running") == 2
      end)
      local ev = host:stop()
      local text = host:log_text()
      local failed = find_state(ev, "g", "failed")
      assert.truthy(failed.reason:find("more than 2 restarts in 1s", 1, true), text)
      -- the group stops its children in reverse, then starts them again in order
      before(failed, find_state(ev, "c", "stopping"), text)
      before(find_state(ev, "c", "stopped"), find_state(ev, "a", "stopping"), text)
      local restarted = find_state(ev, "a", "running", 2)
      before(find_state(ev, "a", "stopped"), restarted, text)
      before(restarted, find_state(ev, "b", "running", 4), text)
      before(find_state(ev, "b", "running", 4), find_state(ev, "c", "running", 2), text)
      assert.truthy(restarted.t - failed.t >= 0.19, ("group backoff not waited: %.3f s\n%s"):format(restarted.t - failed.t, text))
      assert.are.equal(3, count(ev, "b", "failed"), text)
    end)
  end)

  it("restarts spaced wider than the period never exhaust the intensity (25)", function()
    local yaml = member("a") .. member("b", 4, { after = 120, delay = "10ms" }) ..
                 group("g", "one_for_one", { "a", "b" }, { intensity = 1, period = "100ms" })
    with_groups(yaml, function(host)
      host:wait("b's fifth run", function(ev) return count(ev, "b", "running") == 5 end)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(0, count(ev, "g", "failed"), text)
      assert.are.equal(1, count(ev, "a", "running"), text)
    end)
  end)

  it("intensity 0: the first child failure fails the group; policy never keeps it down (26)", function()
    local yaml = member("a") .. member("b", 1) .. member("c") ..
                 group("g", "one_for_one", { "a", "b", "c" }, { intensity = 0, policy = "never" })
    with_groups(yaml, function(host)
      host:wait("the group failed and its children stopped", function(ev)
        return count(ev, "g", "failed") == 1 and count(ev, "a", "stopped") == 1 and count(ev, "c", "stopped") == 1
      end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "b", "running"), text)
      assert.are.equal(1, count(ev, "a", "running"), text)
      assert.truthy(find_state(ev, "g", "failed").reason:find("more than 0 restarts", 1, true), text)
    end)
  end)

  it("nested: q (one_for_all) restarts w1 and w2; when q exhausts its intensity p restarts q as one child (27)", function()
    local yaml = member("w1", 3, { after = 40 }) .. member("w2") .. member("s") ..
                 group("q", "one_for_all", { "w1", "w2" }, { intensity = 1, period = "10s", delay = "50ms" }) ..
                 group("p", "one_for_one", { "q", "s" })
    with_groups(yaml, function(host)
      host:wait("w1's fourth run", function(ev) return count(ev, "w1", "running") == 4 and count(ev, "w2", "running") == 4 end)
      host:hold(0.1)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "s", "running"), text) -- p's other child untouched
      assert.are.equal(1, count(ev, "q", "failed"), text) -- the second crash exceeds intensity 1
      assert.are.equal(0, count(ev, "p", "failed"), text)
      local w2 = logs(ev, "w2", "run")
      assert.are_not.equal(w2[1].pid, w2[2].pid, text)
    end)
  end)

  it("a policy never child under one_for_all is stopped with its siblings and not started again (28)", function()
    local yaml = member("a", nil, { policy = "never" }) .. member("b", 1) .. member("c") ..
                 group("g", "one_for_all", { "a", "b", "c" })
    with_groups(yaml, function(host)
      host:wait("b and c again", function(ev) return count(ev, "b", "running") == 2 and count(ev, "c", "running") == 2 end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "a", "running"), text)
      assert.are.equal("stopped", states(ev, "a")[#states(ev, "a")].state, text)
    end)
  end)

  it("an on_failure child that returns normally does not trigger the strategy (29)", function()
    local yaml = member("a") .. member("b", "return", { policy = "on_failure" }) .. member("c") ..
                 group("g", "one_for_all", { "a", "b", "c" }, { intensity = 0 })
    with_groups(yaml, function(host)
      host:wait("c running", function(ev) return count(ev, "c", "running") == 1 and count(ev, "b", "stopped") == 1 end)
      host:hold(0.2)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(1, count(ev, "a", "running"), text)
      assert.are.equal(1, count(ev, "c", "running"), text)
      assert.are.equal(0, count(ev, "g", "failed"), text)
      assert.are.same({ "starting", "running", "stopped" }, state_names(ev, "b"), text)
    end)
  end)
end)
