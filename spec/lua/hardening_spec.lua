-- Hardening (README "Limits", docs/hardening-notes.md): guarded calls on other processes and
-- names, holder-only unregister, process limits under a spawn bomb, the host memory cap, and
-- bounded mailboxes under a flood. Each case runs `steward run` on an app under
-- spec/apps/hardening/ with its own control socket and host config, reads its stdout lines
-- and JSON log, and stops it. Counts come from the logs; timings are generous (2 loaded cores).
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local ch = require("spec.lua.control_helper")
local assert = require("luassert")

local APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/hardening"
local SLOW = ch.SLOW
local read = h.read_if

-- `steward run APPS/app --log-format json --config CFG` with a fresh control socket; config is
-- more host config text. Returns a control_helper Host that also captures stdout (host.out).
local function launch(app, config)
  local socket = ch.tmp(".sock")
  local host = setmetatable({ dir = APPS .. "/" .. app, err = ch.tmp(".log"), out = ch.tmp(".out"),
                              pidfile = ch.tmp(".pid"), rcfile = ch.tmp(".rc"), config = ch.tmp(".yaml"),
                              socket = socket, events = {}, offset = 0, partial = "" }, ch.Host)
  local f = assert(io.open(host.config, "w"))
  f:write(("control:\n  socket: %q\n"):format(socket), config or "")
  f:close()
  local cmd = ("(%s run %s --log-format json --config %s >%s 2>%s </dev/null & echo $! >%s; wait $!; echo $? >%s)" ..
               " >/dev/null 2>&1 </dev/null &"):format(h.quote(h.steward), h.quote(host.dir), h.quote(host.config),
                                                     host.out, host.err, host.pidfile, host.rcfile)
  os.execute(cmd)
  local deadline = rt.now() + ch.DEADLINE
  while not host.pid and rt.now() < deadline do
    host.pid = tonumber(read(host.pidfile) or "")
    if not host.pid then rt.sleep(0.005) end
  end
  assert(host.pid, "steward did not start")
  return host
end

local function with_host(app, config, fn)
  local host = launch(app, config)
  local ok, err = pcall(fn, host)
  host:cleanup()
  os.remove(host.out)
  if not ok then error(err, 0) end
end

local function stdout(host) return read(host.out) or "" end

-- The stdout lines as a set and a list.
local function lines(text)
  local set, list = {}, {}
  for line in text:gmatch("[^\n]+") do set[line] = true; list[#list + 1] = line end
  return set, list
end

-- Waits until every pattern matches some stdout line; returns the stdout then.
local function wait_lines(host, patterns)
  return host:wait(table.concat(patterns, ", "), function()
    local text = stdout(host)
    for _, pat in ipairs(patterns) do
      if not text:find(pat) then return nil end
    end
    return text
  end)
end

-- The host's RSS in MB; fails at once past bound_mb (a bomb on a host without limits grows by
-- gigabytes: the spec must not take the machine down with it).
local function rss_mb(host, bound_mb)
  local mb = h.proc_sample(host.pid).rss / 1024
  if bound_mb and mb > bound_mb then error(("host RSS %.0f MB, over %d MB"):format(mb, bound_mb), 2) end
  return mb
end

-- Log events with this msg (and, if given, this service), in order.
local function logged(events, msg, svc)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == msg and (not svc or e.service == svc) then out[#out + 1] = e end
  end
  return out
end

-- `steward status` answered (exit 0); returns its wall time.
local function timed_status(host)
  local t0 = rt.now()
  local r = host:ctl("status")
  assert.are.equal(0, r.code, r.stderr)
  return rt.now() - t0
end

-- The service's row in `steward status --json`.
local function service(host, id)
  for _, s in ipairs(host:status().services) do
    if s.id == id then return s end
  end
end

describe("hardening", function()
  describe("guarded calls", function()
    local text, victim

    setup(function()
      with_host("guards", nil, function(host)
        -- the thief and greedy end (today's code: the thief may kill them, itself included)
        host:wait("thief and greedy to end", function(events)
          local ended = {}
          for _, e in ipairs(events) do
            if e.msg == "service state" and (e.state == "stopped" or e.state == "failed") then ended[e.service] = true end
          end
          return ended["app:thief"] and ended["app:greedy"]
        end)
        rt.sleep(0.3 * SLOW) -- anything the thief did would reach the victim by now
        victim = service(host, "app:victim")
        text = stdout(host) -- before the shutdown cancels everyone
        host:stop()
      end)
    end)

    it("passes steward check", function()
      local r = h.run("check", APPS .. "/guards")
      assert.are.equal(0, r.code, r.stderr)
    end)

    it("denies a deny-all service every call on another's name, before anything happens", function()
      local set = lines(text)
      for _, want in ipairs({
        "thief lookup victim_box nil permission denied: process.lookup on victim_box",
        "thief unregister victim_box nil permission denied: process.unregister on victim_box",
        "thief register victim_box nil permission denied: process.register on victim_box",
        "thief terminate victim_box nil permission denied: process.terminate on victim_box",
        "thief cancel victim_box nil permission denied: process.cancel on victim_box",
        "thief monitor victim_box nil permission denied: process.monitor on victim_box",
        "thief link victim_box nil permission denied: process.link on victim_box",
      }) do
        assert(set[want], "missing line: " .. want .. "\n" .. text)
      end
    end)

    it("checks a process acting on itself too (registering its own name)", function()
      assert(lines(text)["thief register thief_box nil permission denied: process.register on thief_box"], text)
    end)

    it("denies terminate, cancel, link and monitor on every guessable pid", function()
      local n = 0
      for line in text:gmatch("[^\n]+") do
        local what, pid, rest = line:match("^thief (%a+) (host|0x%x+) (.*)$")
        if what then
          n = n + 1
          assert.are.equal(("nil permission denied: process.%s on %s"):format(what, pid), rest)
        end
      end
      assert.are.equal(4 * 11, n, text) -- 12 pids but its own, 4 calls each
    end)

    it("leaves the victim untouched: same run, its name, no event", function()
      assert.are.equal("running", victim.state)
      assert.are.equal(0, victim.restarts)
      assert(lines(text)["victim reregister=true pid=" .. victim.pid], text)
      assert.is_nil(text:find("victim event="), text)
      assert.is_nil(text:find("victim lost name"), text)
      assert.is_nil(text:find("victim message="), text)
    end)

    it("lets only the holder unregister a name; registering it again is a no-op for the holder", function()
      local set = lines(text)
      assert(set["victim register=true"], text)
      assert(set["greedy lookup=" .. victim.pid], text)
      assert(set["greedy unregister=nil name not held by this process"], text)
      assert(set["greedy register=nil name already registered"], text)
      assert(set["greedy still=true"], text)
    end)
  end)

  describe("spawn bombs", function()
    local CAP_MB = 256 -- the host's memory cap in these runs; RSS must stay well inside it

    it("stop at the service's limit: refused with \"process limit reached\", the host keeps serving", function()
      with_host("bomb", ("limits:\n  memory: %dMB\n"):format(CAP_MB), function(host)
        -- 301 processes (the service's own and 300 spawned) try twice each; 300 succeed
        local refusals = host:wait("302 refused spawns", function(events)
          rss_mb(host, CAP_MB)
          local r = logged(events, "spawn refused", "app:bomb")
          return #r >= 302 and r
        end)
        rt.sleep(0.2 * SLOW)
        assert.are.equal(302, #logged(host:poll(), "spawn refused", "app:bomb"))
        for _, e in ipairs(refusals) do assert.are.equal("process limit reached", e.reason) end

        -- a churning bomb at its limit: status answers within 1 s, RSS stays bounded, and
        -- another service still spawns (the bombs are bounded per service, not by the host)
        local r = host:ctl("start", "app:churn")
        assert.are.equal(0, r.code, r.stdout .. r.stderr)
        local t_end, worst, n = rt.now() + 2, 0, 0
        while rt.now() < t_end do
          worst = math.max(worst, timed_status(host))
          rss_mb(host, CAP_MB)
          n = n + 1
          rt.sleep(0.1)
        end
        assert(n >= 3, "status sampled " .. n .. " times")
        assert(worst < 1 * SLOW, ("steward status took %.2f s"):format(worst))
        r = host:ctl("stop", "app:churn")
        assert.are.equal(0, r.code, r.stdout .. r.stderr)
        -- Stopping a service stops its whole tree (docs/supervision.md): none of the churn is left.
        assert.are.equal(0, service(host, "app:churn").processes or 0)
        local seen = #logged(host:poll(), "bystander", "app:bystander")
        host:wait("two more bystander spawns", function(events)
          return #logged(events, "bystander", "app:bystander") >= seen + 2
        end)
        assert(timed_status(host) < 1 * SLOW)
        for _, e in ipairs(logged(host:poll(), "bystander", "app:bystander")) do
          assert.are.equal(0, e.refused, "the bystander was refused: " .. tostring(e.reason))
        end
        -- the first bomb stops like any service, its 300 spawned processes with it
        assert.are.equal(301, service(host, "app:bomb").processes)
        r = host:ctl("stop", "app:bomb")
        assert.are.equal(0, r.code, r.stdout .. r.stderr)
        assert.are.equal(0, service(host, "app:bomb").processes or 0)
        assert.are.equal("stopped", service(host, "app:bomb").state)
        assert(timed_status(host) < 1 * SLOW)
        assert(host:alive())
        host:stop()
      end)
    end)

    it("stop at the host's memory cap with \"host memory limit reached\"; RSS stays under it", function()
      local cap = 48
      with_host("bomb", ("limits:\n  memory: %dMB\n"):format(cap), function(host)
        host:wait_event({ msg = "service state", service = "app:bystander", state = "running" })
        -- before the hog, the host alone; under TSan its shadow memory is already past the cap
        local base = rss_mb(host, SLOW > 1 and cap * 4 or cap)
        local r = host:ctl("start", "app:hog")
        assert.are.equal(0, r.code, r.stdout .. r.stderr)
        -- the host's own memory (code, libuv, logs: `base`) is outside the cap
        -- under a sanitizer (SLOW > 1) its shadow memory and allocator grow with what is
        -- allocated, and with the number of processes the cap admits (~3,000 idle ones of
        -- 16 KB: TSan keeps state per mutex and per thread's access): only a looser sanity
        -- bound holds there
        local bound = base + (cap + 16) * (SLOW > 1 and 5 or 1)
        host:wait("a spawn refused for memory", function(events)
          rss_mb(host, bound)
          for _, e in ipairs(logged(events, "spawn refused", "app:hog")) do
            if e.reason == "host memory limit reached" then return true end
          end
        end)
        local t_end = rt.now() + 0.5
        while rt.now() < t_end do rss_mb(host, bound); rt.sleep(0.05) end
        assert(timed_status(host) < 1 * SLOW)
        assert(host:alive())
        host:stop()
      end)
    end)
  end)

  describe("mailboxes", function()
    local floods, cancels, received, rss, base

    setup(function()
      with_host("flood", "limits:\n  mailbox: { messages: 1500 }\n", function(host)
        host:wait_event({ msg = "service state", service = "app:flooder", state = "running" })
        base = rss_mb(host)
        rss = base
        host:wait("four receivers cancelled", function(events)
          rss = math.max(rss, rss_mb(host, base + 256)) -- today's code grows by gigabytes here
          return #logged(events, "receiver cancelled") == 4
        end)
        floods, cancels, received = {}, {}, {}
        for _, e in ipairs(logged(host:poll(), "flood", "app:flooder")) do floods[e.name] = e end
        for _, e in ipairs(logged(host:poll(), "cancel", "app:flooder")) do cancels[e.name] = e end
        for _, e in ipairs(logged(host:poll(), "receiver cancelled")) do received[e.name] = e end
        host:stop()
      end)
    end)

    local function check(name, lo, hi)
      local f, r = floods[name], received[name]
      assert(f and r, "no report for " .. name)
      assert.is_nil(f.other, "a send failed otherwise: " .. tostring(f.other))
      assert(f.first_full and f.first_full >= lo and f.first_full <= hi,
        ("%s: first \"mailbox full\" after %s sends, expected %d to %d"):format(name, tostring(f.first_full), lo, hi))
      assert(f.full > 0)
      -- backpressure, not loss: every send accepted after the mailbox filled had room made by
      -- the receiver taking a message
      assert(f.sent - f.first_full <= r.taken, ("%s: %d more sent, %d taken"):format(name, f.sent - f.first_full, r.taken))
    end

    it("refuse a message past the entry's limits.mailbox.messages with \"mailbox full\"", function()
      check("by_count", 1000, 1010)
    end)

    it("refuse one past limits.mailbox.bytes (64 KB of 1 KB messages with their headers)", function()
      check("by_bytes", 55, 64)
    end)

    it("count queued bytes against the receiver's limits.memory (1 MB)", function()
      check("by_memory", 900, 1000)
    end)

    it("take the host config's limits.mailbox when the entry sets none", function()
      check("by_default", 1500, 1510)
    end)

    it("never refuse a cancel: each full receiver got it", function()
      for _, name in ipairs({ "by_count", "by_bytes", "by_memory", "by_default" }) do
        assert.is_true(cancels[name].ok, name)
        assert.are.equal("enough", received[name].reason, name)
      end
    end)

    it("keep the host's RSS bounded", function()
      -- 4 mailboxes of at most ~1.6 MB each; generous for allocator slack
      assert(rss - base < 64, ("RSS grew by %.0f MB"):format(rss - base))
    end)
  end)

  describe("monitors, links and names", function()
    it("are bounded per process (limits.monitors, links, names), and released ones make room", function()
      local cfg = ch.tmp(".yaml")
      local f = assert(io.open(cfg, "w"))
      f:write("limits: { monitors: 20, links: 20, names: 20 }\n")
      f:close()
      local r = h.run("run", APPS .. "/bounds", "--config", cfg, "-x", "app:bounds")
      os.remove(cfg)
      assert.are.equal(0, r.code, r.stderr)
      assert.are.equal(table.concat({
        "monitors 21 too many monitors",
        "spawn_monitored too many monitors",
        "after unmonitor true",
        "links 21 too many links",
        "relink true",
        "spawn_linked too many links",
        "after unlink true",
        "names 21 too many names",
        "reregister true",
        "after unregister true",
        "for another too many names",
        "after it ended true",
      }, "\n") .. "\n", r.stdout)
    end)
  end)

  it("the host returns a large process's memory to the OS once it ends", function()
    -- under ASan or TSan (SLOW > 1) their allocator, not glibc's, holds freed memory (ASan's
    -- quarantine keeps it on purpose): there is nothing for malloc_trim to give back
    if SLOW > 1 then return end
    with_host("trim", nil, function(host)
      host:wait_event({ msg = "service state", service = "app:idle", state = "running" })
      local base = rss_mb(host)
      host:wait_event({ msg = "holding", service = "app:hog" })
      local held = rss_mb(host)
      assert(held > base + 150, ("the hog holds %.0f MB over %.0f MB"):format(held - base, base))
      local r = host:ctl("stop", "app:hog")
      assert.are.equal(0, r.code, r.stdout .. r.stderr)
      local after
      host:wait("RSS back near its baseline", function()
        after = rss_mb(host)
        return after < base + 40
      end)
      assert(after < base + 40, ("%.0f MB after the hog ended, %.0f MB before it"):format(after, base))
      host:stop()
    end)
  end)
end)
