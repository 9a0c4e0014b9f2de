-- The control socket's limits (docs/operating.md, "Limits"; docs/security.md): a client that
-- never reads its replies is dropped with the host's memory bounded, idle connections and
-- unfinished requests are closed after their timeouts (set short here through the host
-- config), idle connections never lock the operator out, and `status` answers at once while
-- other clients wait on start/stop requests. Raw clients are spec_sock's flood, hold and drip.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")

local APP = C.APPS .. "/slowstop"

-- A host of the slowstop app with more control.* settings in its config.
local function with_host(settings, fn)
  local host = C.launch({ dir = APP, control = settings })
  finally(function() host:cleanup() end)
  host:wait_event({ msg = "control socket" })
  return fn(host)
end

-- spec_sock MODE ARGS... in the background; returns its output file and a reader of it.
local function background(...)
  local out = C.tmp(".out")
  local words = { h.quote(C.spec_sock) }
  for _, a in ipairs({ ... }) do words[#words + 1] = h.quote(tostring(a)) end
  os.execute(("%s >%s 2>&1 &"):format(table.concat(words, " "), out))
  finally(function() os.remove(out) end)
  return function() return h.read_if(out) or "" end
end

local function wait_for(what, fn, seconds)
  local deadline = rt.now() + (seconds or C.DEADLINE)
  while true do
    local r = fn()
    if r then return r end
    assert(rt.now() < deadline, "timed out waiting for " .. what)
    rt.sleep(0.02)
  end
end

local function rss_kb(pid)
  local s = h.read_if("/proc/" .. pid .. "/status") or ""
  return tonumber(s:match("VmRSS:%s*(%d+)")) or 0
end

local function dropped(host, pattern)
  for _, e in ipairs(host:poll()) do
    if e.msg == "control connection dropped" and e.error and e.error:find(pattern) then return e end
  end
end

describe("the control socket's limits", function()
  it("drops a client that writes requests and never reads; memory stays bounded; others are answered", function()
    with_host("  idle_timeout: 3s\n", function(host)
      local before = rss_kb(host.pid)
      local flood = background("flood", host.socket, 30 * C.SLOW)
      local peak = before
      local t0 = rt.now()
      while not flood():find("closed") and rt.now() - t0 < 30 * C.SLOW do
        peak = math.max(peak, rss_kb(host.pid))
        if rt.now() - t0 > 0.5 and rt.now() - t0 < 1.5 then
          assert.are.equal(2, #host:status().services) -- another client is answered meanwhile
        end
        rt.sleep(0.05)
      end
      assert.truthy(flood():find("^closed"), flood())
      assert.truthy(dropped(host, "^replies not read"), host:log_text())
      assert.is_true(peak - before < 100 * 1024, ("RSS grew from %d kB to %d kB"):format(before, peak))
      assert.are.equal(2, #host:status().services)
      host:stop()
    end)
  end)

  it("closes an idle connection after control.idle_timeout", function()
    with_host("  idle_timeout: 1s\n", function(host)
      local t0 = rt.now()
      local hold = background("hold", host.socket, 1, 20 * C.SLOW)
      local line = wait_for("the connection closed", function() return hold():match("closed 0 ([%d.]+)") end, 20 * C.SLOW)
      local after = tonumber(line)
      assert.is_true(after >= 0.9 and after < 1 + 3 * C.SLOW, hold())
      assert.truthy(dropped(host, "^idle for 1s$"), host:log_text())
      assert.is_true(rt.now() - t0 < 15 * C.SLOW)
      host:stop()
    end)
  end)

  it("cuts a request line not finished within control.request_timeout (slowloris)", function()
    with_host("  request_timeout: 1s\n", function(host)
      -- 17 bytes, one every 0.25 s: would take over 4 s
      local drip = background("drip", host.socket, '{"cmd":"status"}\n', 0.25, 20 * C.SLOW)
      local out = wait_for("the connection cut", function() return drip():find("closed") and drip() end, 20 * C.SLOW)
      assert.truthy(out:find("request not finished within 1s", 1, true), out)
      assert.is_nil(out:find('"ok":true', 1, true), out)
      local sent = tonumber(out:match("closed [%d.]+ (%d+)"))
      assert.is_true(sent < 17, out)
      assert.truthy(dropped(host, "^request not finished within 1s$"), host:log_text())
      host:stop()
    end)
  end)

  it("does not lock the operator out with 64 idle connections", function()
    with_host("", function(host)
      local hold = background("hold", host.socket, 64, 60 * C.SLOW)
      wait_for("64 connections", function() return hold():find("connected 64", 1, true) end)
      rt.sleep(1.2) -- idle for a second: a newcomer may close the one idle longest
      for _ = 1, 3 do
        local r = host:ctl("status")
        assert.are.equal(0, r.code, r.stderr)
        assert.truthy(r.stdout:find("app:db"), r.stdout)
      end
      assert.truthy(dropped(host, "closed to make room for a new connection %(at most 64%)"), host:log_text())
      assert.truthy(hold():find("closed %d+ "), hold())
      host:stop()
    end)
  end)

  it("answers status within 1 s while 60 clients wait on start/stop of a service with a slow stop", function()
    with_host("", function(host)
      host:wait_status("slowstop running", function(by) return by["app:slowstop"].state == "running" end)
      local mark = #host:poll()
      local hold = background("hold", host.socket, 60, 60 * C.SLOW,
        '{"cmd":"stop","id":"app:slowstop"}\n', '{"cmd":"start","id":"app:slowstop"}\n',
        '{"cmd":"restart","id":"app:slowstop"}\n')
      wait_for("60 connections", function() return hold():find("connected 60", 1, true) end)
      host:wait_event({ msg = "service state", service = "app:slowstop", state = "stopping" }, mark)
      for _ = 1, 3 do
        local t = rt.now()
        local r = host:ctl("status")
        local took = rt.now() - t
        assert.are.equal(0, r.code, r.stderr)
        assert.is_true(took < 1 * C.SLOW, ("status took %.3fs"):format(took))
        assert.truthy(r.stdout:find("app:slowstop%s+stopping") or r.stdout:find("app:slowstop%s+%a+"), r.stdout)
      end
      host:stop()
    end)
  end)
end)
