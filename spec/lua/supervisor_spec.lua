-- The supervisor end to end (docs/supervision.md, supervision scenarios 1-4, 6, 9-11, 13-18, 31-35, 37,
-- 49, 50): each spec runs `steward run APP --log-format json` on an app of
-- spec/apps/supervisor in the background, waits on its JSON event log (stderr) for what must
-- happen, sends signals, and asserts order and counts from the log. Timing is asserted from
-- the exact `next_attempt` fields and loosely from timestamps; a wait never sleeps and hopes:
-- it polls the log until a condition holds or a generous deadline passes (then it fails with
-- the whole log). Absence ("not restarted") is checked after a wait many times the delay.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local hh = require("spec.lua.host_helper")
local SLOW, DEADLINE = hh.SLOW, hh.DEADLINE
local with_app, states, state_names, count, find_state = hh.with_app, hh.states, hh.state_names, hh.count, hh.find_state
local logs, last_state, host_event, before, near = hh.logs, hh.last_state, hh.host_event, hh.before, hh.near
local read = h.read_if
local sample = h.proc_sample

---------------------------------------------------------------------------------------------

describe("supervisor", function()
  teardown(hh.cleanup_all)

  describe("restart policies", function()
    it("always: restarted after a normal return and after an error, each run a new pid (1)", function()
      with_app("always", function(host)
        host:wait("the third run", function(ev)
          return #logs(ev, "worker", "run") >= 3 and count(ev, "worker", "running") >= 3
        end)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "starting", "running", "stopped", "starting", "running", "failed",
                          "starting", "running", "stopping", "stopped" }, state_names(ev, "worker"), text)
        local s = states(ev, "worker")
        assert.are.equal("returned", s[3].reason)
        assert.are.equal(0.01, s[3].next_attempt)
        assert.are.equal(1, s[3].attempt)
        assert.truthy(s[6].reason:find("second run fails", 1, true), text)
        assert.are.equal(0.02, s[6].next_attempt)
        assert.are.equal(2, s[6].attempt)
        assert.are.equal("stopped", s[10].reason)
        -- every run logged from its own pid
        local runs = logs(ev, "worker", "run")
        assert.are.equal(3, #runs)
        local pids = {}
        for k, r in ipairs(runs) do
          assert.are.equal(k, r.n)
          assert.is_string(r.pid)
          assert.is_nil(pids[r.pid], "pid reused: " .. r.pid)
          pids[r.pid] = true
        end
      end)
    end)

    it("on_failure: a normal return is stopped; an error return, a raise, a kill, a memory-limit failure restart (2)", function()
      with_app("on_failure", function(host)
        local failing = { error_return = "bad value", raises = "raised on purpose", killed = "killed",
                          memory = "memory limit exceeded" }
        host:wait("every service to end for good", function(ev)
          local done = count(ev, "returns", "stopped") == 1
          for name, _ in pairs(failing) do
            local last = last_state(ev, name)
            done = done and last and last.state == "failed" and last.next_attempt == nil
          end
          return done
        end)
        local ev = host:stop()
        local text = host:log_text()
        -- the normal return: stopped, never restarted
        assert.are.same({ "starting", "running", "stopped" }, state_names(ev, "returns"), text)
        assert.are.equal("returned", last_state(ev, "returns").reason)
        assert.is_nil(last_state(ev, "returns").next_attempt)
        assert.are.equal(1, #logs(ev, "returns", "run"))
        -- each failure: failed, restarted after 10ms, failed again, then given up (max_attempts 2)
        for name, why in pairs(failing) do
          assert.are.same({ "starting", "running", "failed", "starting", "running", "failed" },
            state_names(ev, name), name .. "\n" .. text)
          local s = states(ev, name)
          assert.truthy(s[3].reason:find(why, 1, true), name .. ": " .. tostring(s[3].reason))
          assert.are.equal(0.01, s[3].next_attempt, name)
          assert.are.equal("gave up after 2 attempts: ", s[6].reason:sub(1, 26), name)
          assert.truthy(s[6].reason:find(why, 1, true), name)
          local runs = logs(ev, name, "run")
          assert.are.equal(2, #runs, name)
          assert.are_not.equal(runs[1].pid, runs[2].pid, name)
        end
      end)
    end)

    it("never: no kind of end restarts it (3); retryable = false is never retried, whatever the policy (4)", function()
      with_app("terminal", function(host)
        local names = { "never_returns", "never_raises", "never_killed", "fatal_always", "fatal_on_failure",
                        "fatal_returned" }
        host:wait("every service to end", function(ev)
          for _, name in ipairs(names) do
            local last = last_state(ev, name)
            if not last or (last.state ~= "stopped" and last.state ~= "failed") then return nil end
          end
          return true
        end)
        -- a restart would come at once (every delay is 0): give it 200 ms
        host:hold(0.2)
        local ev = host:stop()
        local text = host:log_text()
        local want = {
          never_returns = { "stopped", "returned" },
          never_raises = { "failed", "never again" },
          never_killed = { "failed", "killed" },
          fatal_always = { "failed", "configuration is broken" },
          fatal_on_failure = { "failed", "configuration is broken" },
          fatal_returned = { "failed", "returned for good" },
        }
        for name, w in pairs(want) do
          assert.are.same({ "starting", "running", w[1] }, state_names(ev, name), name .. "\n" .. text)
          local last = last_state(ev, name)
          assert.truthy(last.reason:find(w[2], 1, true), name .. ": " .. tostring(last.reason))
          assert.is_nil(last.reason:find("gave up", 1, true), name)
          assert.is_nil(last.next_attempt, name)
          assert.are.equal(1, #logs(ev, name, "run"), name)
        end
      end)
    end)
  end)

  describe("backoff", function()
    it("initial 40ms, factor 2, max 300ms, jitter 0: delays 40, 80, 160, 300, 300 ms (6)", function()
      with_app("backoff", function(host)
        host:wait("the sixth failure", function(ev) return count(ev, "crasher", "failed") >= 6 end)
        local ev = host:stop()
        local text = host:log_text()
        local failed, starting = {}, {}
        for _, e in ipairs(states(ev, "crasher")) do
          if e.state == "failed" then failed[#failed + 1] = e end
          if e.state == "starting" then starting[#starting + 1] = e end
        end
        assert.are.equal(6, #failed, text)
        assert.are.equal(6, #starting, text)
        local want = { 0.04, 0.08, 0.16, 0.3, 0.3 }
        for n, delay in ipairs(want) do
          -- exact in the event ...
          assert.are.equal(delay, failed[n].next_attempt, "next_attempt of failure " .. n)
          assert.are.equal(n, failed[n].attempt)
          -- ... and about right on the clock (ms timestamps, a loaded machine)
          near(delay, starting[n + 1].t - failed[n].t, 0.02, 0.25, "restart " .. n)
        end
        assert.is_nil(failed[6].next_attempt)
        assert.are.equal("gave up after 6 attempts: ", failed[6].reason:sub(1, 26))
        -- the delays grow in order, whatever the noise
        for n = 1, 3 do
          assert.is_true(starting[n + 2].t - failed[n + 1].t > starting[n + 1].t - failed[n].t - 0.002)
        end
      end)
    end)

    it("a run longer than stable_threshold resets the attempt counter: the next delay is initial_delay (9)", function()
      with_app("stable", function(host)
        host:wait("the fifth run", function(ev) return count(ev, "flaky", "running") >= 5 end)
        local ev = host:stop()
        local text = host:log_text()
        local failed = {}
        for _, e in ipairs(states(ev, "flaky")) do
          if e.state == "failed" then failed[#failed + 1] = e end
        end
        assert.are.equal(4, #failed, text)
        local attempts, delays = {}, {}
        for k, e in ipairs(failed) do
          attempts[k], delays[k] = e.attempt, e.next_attempt
        end
        assert.are.same({ 1, 2, 3, 1 }, attempts, text)
        assert.are.same({ 0.02, 0.04, 0.08, 0.02 }, delays, text)
        -- run 4 really lasted over the threshold
        local run4 = find_state(ev, "flaky", "running", 4)
        assert.is_true(failed[4].t - run4.t >= 0.28, text)
        assert.are.equal(5, #logs(ev, "flaky", "run"))
      end)
    end)

    it("max_attempts 3: three failed runs in a row, then failed for good; a stable run resets the count (10)", function()
      with_app("max_attempts", function(host)
        host:wait("both to give up", function(ev)
          local a, b = last_state(ev, "limited"), last_state(ev, "reset")
          return a and b and a.state == "failed" and not a.next_attempt and b.state == "failed" and not b.next_attempt
        end)
        -- nothing more comes: wait well over the 10ms delay
        host:hold(0.15)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.equal(3, count(ev, "limited", "starting"), text)
        assert.are.equal(3, count(ev, "limited", "failed"), text)
        local last = last_state(ev, "limited")
        assert.are.equal("failed", last.state)
        assert.are.equal("gave up after 3 attempts: ", last.reason:sub(1, 26), text)
        assert.truthy(last.reason:find("crash in run 3", 1, true), last.reason)
        -- reset: runs 1, 2 fail (attempts 1, 2), run 3 is stable (attempt 1 again), 4, 5 fail
        local attempts = {}
        for _, e in ipairs(states(ev, "reset")) do
          if e.state == "failed" then attempts[#attempts + 1] = e.attempt end
        end
        assert.are.same({ 1, 2, 1, 2, 3 }, attempts, text)
        assert.are.equal(5, count(ev, "reset", "starting"), text)
        last = last_state(ev, "reset")
        assert.are.equal("gave up after 3 attempts: ", last.reason:sub(1, 26), text)
        assert.truthy(last.reason:find("crash in run 5", 1, true), last.reason)
      end)
    end)

    it("an explicit 0 is zero: initial_delay 0 restarts at once, max_delay 0 caps every delay at 0 (11)", function()
      with_app("zero", function(host)
        host:wait("both to give up", function(ev)
          return count(ev, "no_delay", "failed") >= 5 and count(ev, "zero_cap", "failed") >= 5
        end)
        local ev = host:stop()
        local text = host:log_text()
        for _, name in ipairs({ "no_delay", "zero_cap" }) do
          local s = states(ev, name)
          assert.are.equal(15, #s, name .. "\n" .. text) -- 5 x starting, running, failed
          for n = 1, 4 do
            local failed, next_start = s[3 * n], s[3 * n + 1]
            assert.are.equal("failed", failed.state)
            assert.are.equal(0, failed.next_attempt, name)
            assert.are.equal("starting", next_start.state)
            near(0, next_start.t - failed.t, 0, 0.2, name .. " restart " .. n)
          end
          assert.is_nil(s[15].next_attempt)
        end
      end)
    end)
  end)

  describe("start order and readiness", function()
    it("starts c, b, a (depends_on and a config reference) and stops a, b, c (13)", function()
      with_app("order", function(host)
        host:wait("a running", function(ev) return find_state(ev, "a", "running") end)
        local ev = host:stop()
        local text = host:log_text()
        before(find_state(ev, "c", "running"), find_state(ev, "b", "starting"), text)
        before(find_state(ev, "b", "running"), find_state(ev, "a", "starting"), text)
        before(find_state(ev, "a", "stopped"), find_state(ev, "b", "stopping"), text)
        before(find_state(ev, "b", "stopped"), find_state(ev, "c", "stopping"), text)
        for _, name in ipairs({ "a", "b", "c" }) do
          assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, name), text)
          assert.are.equal(1, #logs(ev, name, "cancelled"), name)
        end
      end)
    end)

    it("two independent chains start in parallel: about the longest chain, not the sum (14)", function()
      with_app("parallel", function(host)
        host:wait("x3 and y3 running", function(ev)
          return find_state(ev, "x3", "running") and find_state(ev, "y3", "running")
        end)
        local ev = host:stop()
        local text = host:log_text()
        for _, chain in ipairs({ "x", "y" }) do
          before(find_state(ev, chain .. "1", "running"), find_state(ev, chain .. "2", "starting"), text)
          before(find_state(ev, chain .. "2", "running"), find_state(ev, chain .. "3", "starting"), text)
        end
        -- both chains begin before either's first service is ready
        before(find_state(ev, "y1", "starting"), find_state(ev, "x1", "running"), text)
        before(find_state(ev, "x1", "starting"), find_state(ev, "y1", "running"), text)
        local first = math.min(find_state(ev, "x1", "starting").t, find_state(ev, "y1", "starting").t)
        local last = math.max(find_state(ev, "x3", "running").t, find_state(ev, "y3", "running").t)
        -- one chain is 3 x 80 = 240ms; both in a row would be 480ms
        near(0.24, last - first, 0.01, 0.16, "start of both chains")
      end)
    end)

    it("ready: notify: b is starting until process.ready(); a starts only after (15)", function()
      with_app("notify", function(host)
        host:wait("a running", function(ev) return find_state(ev, "a", "running") end)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "b"), text)
        local b_start, b_run = find_state(ev, "b", "starting"), find_state(ev, "b", "running")
        local ready_log = logs(ev, "b", "ready")[1]
        before(b_start, logs(ev, "b", "setting up")[1], text)
        before(ready_log, b_run, text)
        before(b_run, find_state(ev, "a", "starting"), text)
        assert.is_true(b_run.t - b_start.t >= 0.09, text)
        -- nothing of a before b was ready
        before(b_run, states(ev, "a")[1], text)
      end)
    end)

    it("no process.ready() within start_timeout: the start fails, the process is killed, backoff applies (16)", function()
      with_app("start_timeout", function(host)
        host:wait("the second failure", function(ev) return count(ev, "slow", "failed") >= 2 end)
        host:hold(0.1)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "starting", "failed", "starting", "failed" }, state_names(ev, "slow"), text)
        local s = states(ev, "slow")
        assert.are.equal("not ready within start_timeout", s[2].reason)
        assert.are.equal(0.03, s[2].next_attempt)
        assert.are.equal(1, s[2].attempt)
        assert.are.equal("gave up after 2 attempts: not ready within start_timeout", s[4].reason)
        near(0.06, s[2].t - s[1].t, 0.02, 0.25, "first start timeout")
        near(0.03, s[3].t - s[2].t, 0.02, 0.25, "backoff")
        -- each run's heartbeat stops at its failure: the process was killed
        local beats = logs(ev, "slow", "heartbeat")
        local pids = {}
        for _, b in ipairs(beats) do
          pids[b.pid] = (pids[b.pid] or 0) + 1
        end
        local first_pid = beats[1].pid
        local n_pids = 0
        for _ in pairs(pids) do n_pids = n_pids + 1 end
        assert.are.equal(2, n_pids, text)
        for _, b in ipairs(beats) do
          if b.pid == first_pid then before(b, s[2], text) else before(b, s[4], text) end
        end
        -- its dependent never started
        assert.are.equal(0, count(ev, "a", "starting"), text)
      end)
    end)

    it("a dependency failed for good: dependents stay inactive naming it; unrelated ones start (17)", function()
      with_app("blocked", function(host)
        host:wait("a, a2 and e inactive", function(ev)
          return find_state(ev, "a", "inactive") and find_state(ev, "a2", "inactive") and find_state(ev, "e", "inactive")
        end)
        host:wait("d running", function(ev) return find_state(ev, "d", "running") end)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "inactive" }, state_names(ev, "a"), text)
        assert.are.same({ "inactive" }, state_names(ev, "a2"), text)
        assert.are.same({ "inactive" }, state_names(ev, "e"), text)
        assert.are.equal("dependency app:b failed", last_state(ev, "a").reason)
        assert.are.equal("dependency app:a inactive", last_state(ev, "a2").reason)
        assert.are.equal("dependency app:f failed", last_state(ev, "e").reason)
        before(find_state(ev, "b", "failed", 2), find_state(ev, "a", "inactive"), text)
        assert.are.same({ "starting", "failed", "starting", "failed" }, state_names(ev, "b"), text)
        assert.are.equal(1, count(ev, "f", "starting"), text)
        assert.truthy(last_state(ev, "f").reason:find("f is broken for good", 1, true))
        assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "d"), text)
      end)
    end)

    it("a service that is not auto_start but needed by one is started; one nobody needs is not (18)", function()
      with_app("implied", function(host)
        host:wait("a running", function(ev) return find_state(ev, "a", "running") end)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "b"), text)
        before(find_state(ev, "b", "running"), find_state(ev, "a", "starting"), text)
        assert.are.same({}, state_names(ev, "c"), text)
      end)
    end)
  end)

  describe("stop, kill and shutdown", function()
    it("SIGTERM: every service gets CANCEL and is stopped; the host exits 0 after the last (31)", function()
      with_app("shutdown", function(host)
        host:wait("all running", function(ev)
          for _, n in ipairs({ "a", "b", "c", "d" }) do
            if not find_state(ev, n, "running") then return nil end
          end
          return true
        end)
        local ev = host:stop()
        local text = host:log_text()
        local last_stopped
        for _, name in ipairs({ "a", "b", "c", "d" }) do
          assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, name), text)
          assert.are.equal("shutdown", find_state(ev, name, "stopping").reason)
          assert.are.equal("stopped", find_state(ev, name, "stopped").reason)
          assert.are.equal(1, #logs(ev, name, "cancelled"), name)
          local s = find_state(ev, name, "stopped")
          if not last_stopped or s.i > last_stopped.i then last_stopped = s end
        end
        before(host_event(ev, "shutting down"), find_state(ev, "d", "stopping"), text)
        before(last_stopped, ev[#ev], text) -- "stopped": the host's last line
        before(find_state(ev, "a", "stopped"), find_state(ev, "b", "stopping"), text)
        before(find_state(ev, "b", "stopped"), find_state(ev, "c", "stopping"), text)
      end)
    end)

    it("services that ignore CANCEL, even in `while true do end`, are killed after stop_timeout (32)", function()
      with_app("kill_timeout", function(host)
        host:wait("all up", function(ev)
          return #logs(ev, "spinner", "up") == 1 and #logs(ev, "sleeper", "up") == 1 and #logs(ev, "polite", "up") == 1
        end)
        local ev = host:stop()
        local text = host:log_text()
        for _, name in ipairs({ "spinner", "sleeper" }) do
          local stopping, stopped = find_state(ev, name, "stopping"), find_state(ev, name, "stopped")
          assert.are.equal("killed after stop_timeout", stopped.reason, text)
          near(0.1, stopped.t - stopping.t, 0.02, 0.4, name .. " kill")
        end
        assert.are.equal(1, #logs(ev, "sleeper", "cancelled"), text)
        assert.are.equal("stopped", find_state(ev, "polite", "stopped").reason) -- returned, not killed
      end)
    end)

    it("a depends on b, b ignores CANCEL: a stopped first, b killed after, the host waits for both (33)", function()
      with_app("levels", function(host)
        host:wait("a up", function(ev) return #logs(ev, "a", "up") == 1 end)
        local ev = host:stop()
        local text = host:log_text()
        local a_stopped, b_stopping, b_stopped = find_state(ev, "a", "stopped"), find_state(ev, "b", "stopping"),
          find_state(ev, "b", "stopped")
        before(find_state(ev, "a", "stopping"), a_stopped, text)
        before(a_stopped, b_stopping, text)
        before(b_stopping, b_stopped, text)
        assert.are.equal("stopped", a_stopped.reason)
        assert.are.equal("killed after stop_timeout", b_stopped.reason)
        near(0.15, b_stopped.t - b_stopping.t, 0.02, 0.4, "b's stop")
        assert.are.equal(1, #logs(ev, "b", "cancelled"), text)
        before(b_stopped, ev[#ev], text)
      end)
    end)

    it("a second SIGINT during a slow shutdown exits at once with code 1 (34)", function()
      with_app("second_signal", function(host)
        host:wait("stubborn up", function(ev) return #logs(ev, "stubborn", "up") == 1 end)
        host:signal("INT")
        host:wait("the CANCEL", function(ev) return #logs(ev, "stubborn", "cancelled") == 1 end)
        local t = rt.now()
        host:signal("INT")
        local code = host:wait_exit()
        local took = rt.now() - t
        local text = host:log_text()
        assert.are.equal(1, code, text)
        assert.is_true(took < 2 * SLOW, "took " .. took .. " s") -- its stop_timeout is 10s
        local ev = host:poll()
        assert.is_nil(find_state(ev, "stubborn", "stopped"), text)
        assert.is_nil(host_event(ev, "stopped"), text)
        assert.truthy(host_event(ev, "second signal: exiting now"), text)
      end)
    end)

    it("a service that exits by itself during shutdown is not restarted and keeps its own reason (35)", function()
      with_app("exit_during_shutdown", function(host)
        host:wait("a up", function(ev) return #logs(ev, "a", "up") == 1 end)
        local ev = host:stop()
        local text = host:log_text()
        assert.are.same({ "starting", "running", "stopped" }, state_names(ev, "b1"), text)
        assert.are.equal("returned", last_state(ev, "b1").reason)
        assert.are.same({ "starting", "running", "failed" }, state_names(ev, "b2"), text)
        local b2 = last_state(ev, "b2")
        assert.truthy(b2.reason:find("b2 quit on its own", 1, true), b2.reason)
        assert.is_nil(b2.reason:find("traceback", 1, true), b2.reason)
        for _, name in ipairs({ "b1", "b2" }) do
          assert.is_nil(last_state(ev, name).next_attempt, name)
          assert.are.equal(0, #logs(ev, name, "cancelled"), name)
          before(host_event(ev, "shutting down"), last_state(ev, name), text)
        end
        assert.are.equal("stopped", last_state(ev, "a").reason)
      end)
    end)

    it("shutdown.timeout bounds the whole shutdown: past it what is left is killed and the host exits (36)", function()
      local config = (os.getenv("SPEC_DIR") or "spec") .. "/apps/supervisor/shutdown_timeout.host.yaml"
      with_app("shutdown_timeout", function(host)
        host:wait("stubborn up", function(ev) return #logs(ev, "stubborn", "up") == 1 end)
        host:signal("TERM")
        local code, took = host:wait_exit()
        local text = host:log_text()
        assert.are.equal(0, code, text)
        near(0.3, took, 0.05, 1.5, "shutdown bounded by shutdown.timeout")
        assert.truthy(host_event(host.events, "shutdown timeout: killing what is left"), text)
        assert.are.equal("stopped", last_state(host.events, "stubborn").state, text)
      end, nil, "--config " .. h.quote(config))
    end)

    it("shutdown while waiting in backoff or still starting: cancelled, not started later; no hang (37)", function()
      with_app("shutdown_pending", function(host)
        host:wait("backoff and starting", function(ev)
          local b = find_state(ev, "backing_off", "failed")
          return b and b.next_attempt == 5 and find_state(ev, "starting", "starting")
            and find_state(ev, "stuck_starting", "starting")
        end)
        host:signal("TERM")
        local code, took = host:wait_exit()
        local ev = host.events
        local text = host:log_text()
        assert.are.equal(0, code, text)
        assert.is_true(took < 3 * SLOW, "shutdown took " .. took .. " s")
        assert.are.same({ "starting", "running", "failed", "stopped" }, state_names(ev, "backing_off"), text)
        assert.are.equal("stopped while waiting to restart", last_state(ev, "backing_off").reason)
        assert.are.same({ "starting", "stopping", "stopped" }, state_names(ev, "starting"), text)
        assert.are.equal("stopped", last_state(ev, "starting").reason)
        assert.are.same({ "starting", "stopping", "stopped" }, state_names(ev, "stuck_starting"), text)
        assert.are.equal("killed after stop_timeout", last_state(ev, "stuck_starting").reason)
        assert.are.same({}, state_names(ev, "blocked"), text)
        -- nothing started after the shutdown began
        local down = host_event(ev, "shutting down")
        for _, e in ipairs(ev) do
          if e.i > down.i then assert.are_not.equal("starting", e.state, text) end
        end
        assert.are.equal("stopped", ev[#ev].msg)
      end)
    end)
  end)

  describe("limits and faults", function()
    it("a service over limits.memory fails alone and is restarted by its policy (49)", function()
      with_app("memory", function(host)
        local gave_up = host:wait("hog to give up", function(ev)
          local last = last_state(ev, "hog")
          return last and last.state == "failed" and not last.next_attempt and last
        end)
        -- steady keeps ticking afterwards
        host:wait("three ticks after", function(ev)
          local n = 0
          for _, e in ipairs(logs(ev, "steady", "tick")) do
            if e.i > gave_up.i then n = n + 1 end
          end
          return n >= 3
        end)
        local ev = host:stop()
        local text = host:log_text()
        local failed = {}
        for _, e in ipairs(states(ev, "hog")) do
          if e.state == "failed" then failed[#failed + 1] = e end
        end
        assert.are.equal(3, #failed, text)
        assert.are.equal("memory limit exceeded", failed[1].reason)
        assert.are.equal("memory limit exceeded", failed[2].reason)
        assert.are.equal("gave up after 3 attempts: memory limit exceeded", failed[3].reason)
        assert.are.equal(0.02, failed[1].next_attempt)
        assert.are.equal(3, #logs(ev, "hog", "run"))
        assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "steady"), text)
      end)
    end)

    it("1,000 crash-restart cycles do not grow the host's RSS or open descriptors (50)", function()
      with_app("churn", function(host)
        host:wait("the baseline run", function(ev) return #logs(ev, "crasher", "baseline") == 1 end, 60 * SLOW)
        local before_s = sample(host.pid)
        local ev = host:poll()
        local starts = count(ev, "crasher", "starting")
        assert.are.equal(200, starts, "sampled the baseline too late")
        local done = host:wait("the 1,201st run", function(e) return #logs(e, "crasher", "done") == 1 end, 120 * SLOW)
        assert.truthy(done)
        local after = sample(host.pid)
        ev = host:stop()
        local text = host:log_text()
        assert.are.equal(1201, count(ev, "crasher", "starting"))
        assert.are.equal(1200, count(ev, "crasher", "failed"))
        -- the attempt counter kept growing and the delay stayed 0 all along
        local last_failed = find_state(ev, "crasher", "failed", -1)
        assert.are.equal(1200, last_failed.attempt)
        assert.are.equal(0, last_failed.next_attempt)
        local msg = ("rss %d -> %d kB, fds %d -> %d, threads %d -> %d"):format(before_s.rss, after.rss,
          before_s.fds, after.fds, before_s.threads, after.threads)
        if SLOW == 1 then assert.is_true(after.rss - before_s.rss < 1024, msg) end
        assert.are.equal(before_s.fds, after.fds, msg)
        assert.are.equal(before_s.threads, after.threads, msg)
        assert.is_nil(text:find('"level":"error","msg":"[^p]'), "unexpected error")
      end)
    end)
  end)
end)
