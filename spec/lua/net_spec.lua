-- The net module end to end: echo over TCP and a unix socket between two processes, port 0,
-- reads with timeouts, errors, guards, sockets closed however their process ends (with the
-- host's open fds back at their baseline after a kill), and 200 connections served by tasks.
-- Cases run `steward run spec/apps/net/cases -x net:run CASE`, which prints what it saw.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local host = require("spec.lua.host_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
local CASES = "../net/cases" -- runtime_helper runs apps under spec/apps/runtime

local function run(case, ...)
  return rt.ok(rt.run(CASES, "net:run", { case, ... }, { limit = 30 * SLOW })).stdout
end

local function lines(...)
  return table.concat({ ... }, "\n") .. "\n"
end

-- Whether anything is at path (io.open cannot open a socket file).
local function present(path)
  return rt.exit_code(os.execute("test -e " .. h.quote(path))) == 0
end

-- A fresh path for a unix socket (os.tmpname makes a file: only its name is wanted).
local function sock_path()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".sock"
end

describe("net", function()
  it("echoes over TCP between two processes; listen on port 0 reports the real port", function()
    assert.are.equal(lines(
      "addr\ttrue\ttrue",
      "echo\t[hello] [] [world with spaces]",
      "quit\tquit",
      "peer is the server\ttrue",
      "local\ttrue",
      "read after server quit\tnil\tclosed",
      "close\ttrue\ttrue",
      "used after close\tnil\tclosed"), run("echo_tcp"))
  end)

  it("echoes over a unix socket; the listener's file goes with it", function()
    local path = sock_path()
    assert.are.equal(lines(
      "addr\ttrue",
      "echo\t[hello] [] [world with spaces]",
      "quit\tquit",
      "peer\tunix://" .. path,
      "local\tunix://",
      "read after server quit\tnil\tclosed",
      "again\tnil\tno such file or directory"), run("echo_unix", path))
    assert.is_false(present(path))
  end)

  it("a unix socket file left by a killed host is replaced; any other file is not", function()
    local ctl, out = sock_path(), os.tmpname()
    local function launch()
      local pidfile = os.tmpname()
      os.execute(("(%s run %s -x net:kill %s >%s 2>&1 </dev/null & echo $! >%s) >/dev/null 2>&1"):format(
        h.quote(h.steward), h.quote(SPEC .. "/apps/net/cases"), h.quote(ctl), out, pidfile))
      local pid = tonumber(h.read(pidfile))
      os.remove(pidfile)
      local deadline = rt.now() + 15 * SLOW
      while not h.read(out):find("ready\n") and rt.now() < deadline do rt.sleep(0.01) end
      return pid
    end
    local pid = launch()
    assert.are.equal("ready\n", h.read(out))
    os.execute("kill -KILL " .. pid)
    local deadline = rt.now() + 15 * SLOW
    while h.read_if("/proc/" .. pid .. "/status") and not h.read("/proc/" .. pid .. "/status"):find("State:%s*Z")
          and rt.now() < deadline do rt.sleep(0.01) end
    assert.is_true(present(ctl)) -- left behind
    pid = launch()
    local ok = h.read(out) == "ready\n"
    os.execute("kill -KILL " .. pid)
    local text = h.read(out)
    for _, p in ipairs { ctl, out } do os.remove(p) end
    assert.is_true(ok, text)
    local file = os.tmpname() -- a regular file
    local r = run("listen_on_file", file)
    assert.is_true(present(file))
    os.remove(file)
    assert.are.equal("listen\tnil\taddress already in use\n", r)
  end)

  it("listens on port 0 (IPv4, IPv6, localhost); a port in use is an error; addr after close is closed", function()
    local out = run("port0")
    assert.matches("^v4\ttrue\nv6\t[^\n]+\nv6 peer\ttrue\ttrue\nlocalhost\ttrue\n", out)
    local v6 = out:match("\nv6\t([^\n]+)\n")
    assert.is_true(v6 == "ok" or v6:find("^unavailable: ") ~= nil, v6) -- a host without IPv6
    assert.matches(lines(
      "in use\tnil\taddress already in use",
      "closed addr\tnil\tclosed",
      "reuse after close\ttrue",
      "tostring\ttrue\tnet.listener") .. "$", out)
  end)

  it("refuses malformed addresses with nil, err; wrong argument types raise", function()
    local bad = function(a, why) return a .. "\tnil\tbad address \"" .. a .. "\": " .. why end
    local proto = "expected tcp://HOST:PORT or unix://PATH"
    assert.are.equal(lines(
      bad("127.0.0.1:80", proto), bad("http://x", proto),
      bad("tcp://127.0.0.1", "no port"), bad("tcp://127.0.0.1:65536", "port must be 0-65535"),
      bad("tcp://:80", "expected a host"),
      bad("tcp://example.com:80", "the host must be a numeric IP address or localhost"),
      bad("tcp://::1:80", "an IPv6 address goes in brackets"), bad("tcp://[::1]80", "expected [IPv6]:PORT"),
      bad("unix://", "no path"), bad("tcp://1.2.3.4:8x", "port must be 0-65535"),
      "type\tfalse\tbad argument #1 to '?' (string expected, got table)",
      "connect\tnil\tbad address \"tcp://nowhere:1\": the host must be a numeric IP address or localhost",
      "timeout type\tfalse\tbad argument #2 to '?' (expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds))"),
      run("bad_addresses"))
  end)

  it("read_line (\\r\\n too, 64 KB at most), read_exact, read up to n, each with a timeout; a peer closing reads closed", function()
    assert.are.equal(lines(
      "read_line crlf\tline one",
      "read_line lf\tline two",
      "read_exact across writes\tabcde",
      "read up to n\ttrue",
      "rest\tfghij",
      "read timeout\tnil\ttimeout",
      "waited\ttrue",
      "read_line timeout\tnil\ttimeout",
      "read_exact timeout\tnil\ttimeout",
      "zero timeout\tnil\ttimeout",
      "too long\tnil\tline too long",
      "exact\t70000",
      "last line\ttail without newline",
      "then\tnil\tclosed",
      "read at end\tnil\tclosed",
      "read_exact at end\tnil\tclosed",
      "bad n\tfalse\tbad argument #2 to '?' (expected a byte count of at least 1)",
      "bad timeout\tfalse\tbad argument #3 to '?' (expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds))",
      "not a conn\tfalse\tbad argument #1 to '?' (net.conn expected, got table)"), run("reads"))
  end)

  it("read_exact past the buffer; a write past the queue's bound waits (and times out); close flushes", function()
    assert.are.equal(lines(
      "read_exact 300000\t300000\ttrue",
      "then\tnil\tclosed",
      "write past the bound\tnil\ttimeout",
      "waited\ttrue",
      "read all\ttrue",
      "small write\ttrue\tz",
      "close flushes\ttrue",
      "peer sees end\tnil\tclosed"), run("big"))
  end)

  it("connecting to a closed port or a missing unix socket is an error", function()
    assert.are.equal(lines(
      "connect\tnil\tconnection refused",
      "connect with timeout\tnil\tconnection refused",
      "unix\tnil\tno such file or directory"), run("refused"))
  end)

  it("closed objects read closed, and wake the tasks waiting on them; one reader at a time", function()
    local out = run("closing")
    assert.are.equal(lines(
      "accept while closed\tnil\tclosed",
      "accept after close\tnil\tclosed",
      "listener close twice\ttrue",
      "close\ttrue",
      "read while closed\tnil\tclosed",
      "write after close\tnil\tclosed",
      "peer after close\tnil\tclosed"), out:match("^(.-\n)send conn"))
    assert.matches("\nsend conn\tnil\t[^\n]*userdata[^\n]*\n", out)
    assert.matches("\nsecond reader\tnil\tbusy: another task is reading\nfirst reader\tnil\ttimeout\n", out)
    assert.matches("\nread in sort\tfalse\t[^\n]*cannot block here", out)
  end)

  it("a process's sockets close however it ends: return, error, kill, link failure", function()
    assert.are.equal(lines(
      "return\tnil\tclosed\tnil\tconnection refused",
      "error\tnil\tclosed\tnil\tconnection refused",
      "kill\tnil\tclosed\tnil\tconnection refused",
      "link\tnil\tclosed\tnil\tconnection refused"), run("ends"))
  end)

  it("a process killed with sockets open: the peers read EOF and the host's open fds return to baseline", function()
    rt.with_driven(SPEC .. "/apps/net/cases", "net:kill", function(d)
      local baseline = d.fds()
      assert.are.equal("opened 12\n", d.ask("open"))
      local open = d.fds()
      assert.is_true(open >= baseline + 17, ("fds: %d at baseline, %d with sockets"):format(baseline, open))
      assert.are.equal("eof nil,closed nil,closed nil,closed nil,closed nil,closed\n", d.ask("kill"))
      rt.wait_fds(d, baseline)
    end)
  end)

  it("a run that ends while a process holds sockets (waits and timeouts armed) shuts down cleanly", function()
    local path = sock_path()
    -- -x waits for what its process left: the leaver ignores its CANCEL and is killed, sockets
    -- and all, after shutdown.timeout (300ms here; docs/lua-api.md "steward run -x")
    local short = SPEC .. "/apps/returns/short_shutdown.host.yaml"
    local r = rt.ok(rt.run(CASES, "net:run", { "leave", path }, { limit = 30 * SLOW, options = { "--config", short } }))
    assert.are.equal("left\n", r.stdout)
    assert.is_true(r.elapsed < 5 * SLOW, "took " .. r.elapsed .. " s")
    assert.is_false(present(path))
  end)

  it("200 concurrent connections to one listener, each served by its own task", function()
    assert.are.equal(lines("echoed\t200", "server\tactive=201 most=201"), run("many", 200))
  end)

  it("processes owning sockets stay on their worker while idle workers steal others", function()
    assert.are.equal("round trips\t1200\n", run("steal", 6, 200))
  end)

  it("at most 1024 sockets per process", function()
    assert.are.equal(lines(
      "listeners\t1024\ttoo many sockets (at most 1024 per process)",
      "connect at the limit\tnil\ttoo many sockets (at most 1024 per process)",
      "after one closed\ttrue"), run("limit"))
  end)

  it("a listener dropped and collected is closed", function()
    assert.are.equal("collected\tconnection refused\n", run("gc"))
  end)

  it("net.listen and net.connect are guarded: a denied call says so and does nothing", function()
    host.with_app("net", function(hst)
      local probes = hst:wait_each("probe", { "app:guarded", "app:open" })
      local g = probes["app:guarded"]
      assert.are.equal("permission denied: net.listen on tcp:127.0.0.1:0", g.listen_tcp)
      assert.are.equal("permission denied: net.listen on unix:/nonexistent/steward-net-spec.sock", g.listen_unix)
      assert.are.equal("connection refused", g.connect_tcp) -- allowed by its policy
      assert.are.equal("permission denied: net.connect on tcp:[::1]:1", g.connect_v6) -- strict: no policy allows it
      local o = probes["app:open"]
      assert.are.equal("ok", o.listen_tcp)
      assert.are.equal("connection refused", o.connect_tcp)
      hst:stop()
    end, SPEC .. "/apps/net/guarded")
  end)
end)
