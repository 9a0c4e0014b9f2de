-- Every example app runs (examples/*/README.md): each starts from its own directory, does what
-- its README says, read from its JSON event log, and stops cleanly on SIGTERM.
local hh = require("spec.lua.host_helper")
local h = require("spec.lua.steward_helper")

local function example(name, fn)
  return hh.with_app(name, fn, "examples/" .. name)
end

local function log_of(host, service, msg)
  host:wait(service .. " " .. msg, function(ev) return #hh.logs(ev, service, msg) > 0 end)
  return hh.logs(host.events, service, msg)[1]
end

describe("examples", function()
  teardown(hh.cleanup_all)

  it("every example has a README and passes steward check", function()
    for _, name in ipairs(h.list("examples")) do
      assert.is_true(h.exists("examples/" .. name .. "/README.md"), name .. " has no README.md")
      local r = h.run("check", "examples/" .. name)
      assert.are.equal(0, r.code, name .. ": " .. r.stderr)
    end
  end)

  it("ping-pong: ping starts after pong is ready, does its round trips and stops", function()
    example("ping-pong", function(host)
      local done = log_of(host, "app:ping", "ping-pong done")
      assert.are.equal(10000, done.rounds)
      host:wait("ping stopped", function(ev) return hh.count(ev, "app:ping", "stopped") == 1 end)
      local ev = host:stop()
      hh.before(hh.find_state(ev, "app:pong", "running"), hh.find_state(ev, "app:ping", "starting"), host:log_text())
      assert.are.equal("returned", hh.find_state(ev, "app:ping", "stopped").reason)
    end)
  end)

  it("ping-pong: steward test runs pong's tests with pong running", function()
    local r = h.run("test", "examples/ping-pong", "--format", "tap")
    assert.are.equal(0, r.code, r.stdout .. r.stderr)
    assert.are.equal("ok 1 - app:pong_test: pong answers a ping with a pong carrying the same payload\n" ..
                     "ok 2 - app:pong_test: pong answers pings in the order they were sent\n1..2\n", r.stdout)
  end)

  it("worker-pool: a crashed worker's job is retried and every job is done", function()
    example("worker-pool", function(host)
      local done = log_of(host, "app:pool", "all jobs done")
      assert.are.equal(100, done.jobs)
      local want = 0
      for n = 1, 100 do want = want + n * (n + 1) * (2 * n + 1) / 6 end
      assert.are.equal(want, done.total)
      assert.are.equal(1, #hh.logs(host.events, "app:pool", "worker failed"))
      host:stop()
    end)
  end)

  it("key-value: a one-shot client sets and gets a key over the store's socket", function()
    example("key-value", function(host)
      host:wait("store running", function(ev) return hh.count(ev, "app:store", "running") == 1 end)
      local set = h.run("run", "examples/key-value", "-x", "app:client", "SET", "greeting", "hello")
      assert.are.equal("OK\n", set.stdout, set.stderr)
      local get = h.run("run", "examples/key-value", "-x", "app:client", "GET", "greeting")
      assert.are.equal("VALUE hello\n", get.stdout, get.stderr)
      assert.are.equal(0, get.code)
      host:stop()
    end)
  end)

  it("crontab: a reload that adds a job starts its worker, the others keep running", function()
    local dir = h.copy_example("crontab")
    hh.with_app("crontab", function(host)
      host:wait("three jobs scheduled", function(ev) return #hh.logs(ev, "cron:report", "scheduled") == 1 end)
      local f = assert(io.open(dir .. "/app.yaml", "a"))
      f:write("\n  - name: digest\n    kind: process.service\n    process: job\n" ..
              "    input: [ \"report\", \"1s\" ]\n    lifecycle: { auto_start: true }\n")
      f:close()
      local r = h.run("reload", dir)
      assert.are.equal(0, r.code, r.stderr)
      host:wait("the new job ran", function(ev) return #hh.logs(ev, "cron:digest", "ran") >= 1 end)
      local ev = host:stop()
      assert.are.equal(1, #hh.logs(ev, "cron:heartbeat", "scheduled"), host:log_text()) -- not restarted
    end, dir)
    os.execute("rm -rf " .. h.quote(dir))
  end)

  it("crontab: each job ticks on its own period and unschedules on CANCEL", function()
    example("crontab", function(host)
      host:wait("three heartbeats", function(ev) return #hh.logs(ev, "cron:heartbeat", "ran") >= 3 end)
      local ev = host:stop()
      for _, job in ipairs { "heartbeat", "cleanup", "report" } do
        local u = hh.logs(ev, "cron:" .. job, "unscheduled")
        assert.are.equal(1, #u, host:log_text())
        assert.are.equal(#hh.logs(ev, "cron:" .. job, "ran"), u[1].runs)
      end
    end)
  end)

  it("migration: api starts only after every step, and migrate stops as returned", function()
    example("migration", function(host)
      host:wait("api running", function(ev) return hh.count(ev, "app:api", "running") == 1 end)
      local ev = host:stop()
      local steps = hh.logs(ev, "app:migrate", "migrated")
      assert.are.equal(3, #steps, host:log_text())
      hh.before(steps[3], hh.find_state(ev, "app:api", "starting"), host:log_text())
      assert.are.equal("returned", hh.find_state(ev, "app:migrate", "stopped").reason)
    end)
  end)

  it("mass-spawn: 10,000 monitored workers, every result counted", function()
    example("mass-spawn", function(host)
      local done = log_of(host, "app:boss", "all workers done")
      assert.are.equal(10000, done.workers)
      assert.are.equal(10000 * 10001 * 20001 / 6, done.sum)
      host:stop()
    end)
  end)
  it("lua-supervisor: a flaky job is restarted with backoff, a non-retryable one is stopped", function()
    example("lua-supervisor", function(host)
      host:wait("four children settled", function(ev) return #hh.logs(ev, "app:dispatcher", "child settled") == 4 end)
      local ev = host:stop()
      local by = {}
      for _, e in ipairs(hh.logs(ev, "app:dispatcher", "child settled")) do by[e.key] = e end
      assert.are.same({ "stopped", 0 }, { by["worker#1"].state, by["worker#1"].restarts })
      assert.are.same({ "stopped", 2 }, { by["worker#3"].state, by["worker#3"].restarts }, host:log_text())
      assert.are.same({ "failed", 0 }, { by["worker#4"].state, by["worker#4"].restarts })
      assert.are.equal(3, #hh.logs(ev, "app:dispatcher", "job done"))
    end)
  end)

  it("backup: archives its data volume with tar and keeps the newest 3", function()
    -- on a copy (its archives are written beside it), with its steward.conf allowing exec
    local dir = h.copy_example("backup")
    os.execute("rm -f " .. h.quote(dir) .. "/archives/*.tar.gz")
    local conf = dir .. "/steward.conf"
    local r = h.run("run", dir, "--config", conf, "-x", "app:demo", "5")
    assert.are.equal(0, r.code, r.stderr)
    local kept = r.stdout:match("kept: ([^\n]*)\n")
    assert.are.equal("backup-000003.tar.gz backup-000004.tar.gz backup-000005.tar.gz", kept, r.stdout)
    local listing = io.popen("tar tzf " .. h.quote(dir .. "/archives/backup-000005.tar.gz") .. " | sort"):read("*a")
    assert.truthy(listing:find("./notes/monday.txt\n", 1, true), listing)
    assert.truthy(listing:find("./readme.txt\n", 1, true), listing)
    -- the service: one backup at its start (the 6th), pruning the 3rd
    hh.with_app("backup", function(host)
      local done = log_of(host, "app:backup", "backed up")
      assert.are.equal("backup-000006.tar.gz", done.name)
      assert.are.equal(1, done.pruned)
      host:stop()
    end, dir, "--config " .. h.quote(conf))
    assert.is_nil(io.open(dir .. "/archives/backup-000003.tar.gz"))
    os.execute("rm -rf " .. h.quote(dir))
  end)
end)
