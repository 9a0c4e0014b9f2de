-- Each case prints what it observed, tab-separated; the spec compares the lines.
local cases = {}

-- Starts an echo server process on addr; returns its real address (or nil, err).
local function echo_server(addr)
  local pid = process.spawn("echo_server", nil, addr, process.pid())
  local msg = process.inbox():receive()
  local real, err = msg:data()
  return real, err, pid
end

local function echo_roundtrip(addr)
  local c = assert(net.connect(addr))
  local out = {}
  for _, line in ipairs { "hello", "", "world with spaces" } do
    assert(c:write(line .. "\n"))
    out[#out + 1] = "[" .. tostring(c:read_line("5s")) .. "]"
  end
  print("echo", table.concat(out, " "))
  assert(c:write("quit\n"))
  print("quit", c:read_line("5s"))
  return c
end

function cases.echo_tcp()
  local addr = assert(echo_server("tcp://127.0.0.1:0"))
  print("addr", addr:match("^tcp://127%.0%.0%.1:%d+$") ~= nil, tonumber(addr:match(":(%d+)$")) > 0)
  local c = echo_roundtrip(addr)
  print("peer is the server", c:peer() == addr)
  print("local", c:local_addr():match("^tcp://127%.0%.0%.1:%d+$") ~= nil)
  print("read after server quit", c:read(1, "5s"))
  print("close", c:close(), c:close())
  print("used after close", c:read(1))
end

function cases.echo_unix(path)
  local addr = assert(echo_server("unix://" .. path))
  print("addr", addr == "unix://" .. path)
  local c = echo_roundtrip(addr)
  print("peer", c:peer())
  print("local", c:local_addr())
  print("read after server quit", c:read(1, "5s"))
  -- the server closed its listener: the socket file is gone, connecting fails
  print("again", net.connect(addr))
  c:close()
end

-- A path that holds something else than a socket is never replaced.
function cases.listen_on_file(path)
  print("listen", net.listen("unix://" .. path))
end

function cases.port0()
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local port = tonumber(l:addr():match("^tcp://127%.0%.0%.1:(%d+)$"))
  print("v4", port ~= nil and port > 0)
  local l6, err = net.listen("tcp://[::1]:0")
  if l6 then
    print("v6", l6:addr():match("^tcp://%[::1%]:(%d+)$") ~= nil and "ok")
    local c = assert(net.connect(l6:addr()))
    local s = assert(l6:accept("5s"))
    print("v6 peer", c:local_addr() == s:peer(), s:local_addr() == l6:addr())
  else
    print("v6", "unavailable: " .. err)
    print("v6 peer", true, true)
  end
  local l2 = assert(net.listen("tcp://localhost:0"))
  print("localhost", l2:addr():match("^tcp://127%.0%.0%.1:%d+$") ~= nil)
  print("in use", net.listen(l:addr()))
  l:close()
  print("closed addr", l:addr())
  print("reuse after close", net.listen("tcp://127.0.0.1:" .. port) ~= nil)
  print("tostring", tostring(l):match("^net%.listener: ") ~= nil, getmetatable(l))
end

function cases.bad_addresses()
  for _, a in ipairs { "127.0.0.1:80", "http://x", "tcp://127.0.0.1", "tcp://127.0.0.1:65536", "tcp://:80",
                       "tcp://example.com:80", "tcp://::1:80", "tcp://[::1]80", "unix://", "tcp://1.2.3.4:8x" } do
    print(a, net.listen(a))
  end
  print("type", pcall(net.listen, {}))
  print("connect", net.connect("tcp://nowhere:1"))
  print("timeout type", pcall(net.connect, "tcp://127.0.0.1:1", { timeout = "soon" }))
end

-- A listener and a client task in one process; the client writes as `script` says.
local function pair(script)
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  coroutine.spawn(function()
    local c = assert(net.connect(l:addr()))
    script(c)
  end)
  local s = assert(l:accept("5s"))
  l:close()
  return s
end

function cases.reads()
  local go = channel.new()
  local s = pair(function(c)
    c:write("line one\r\nline two\nabc")
    go:receive()
    c:write("de")
    go:receive()
    c:write("fghij")
    go:receive()
    c:write(string.rep("x", 70000))
    go:receive()
    c:write("tail without newline")
    c:close()
  end)
  print("read_line crlf", s:read_line())
  print("read_line lf", s:read_line())
  go:send(true)
  print("read_exact across writes", s:read_exact(5, "5s"))
  go:send(true)
  local got = s:read(3, "5s")
  print("read up to n", #got >= 1 and #got <= 3)
  got = got .. s:read_exact(5 - #got, "5s")
  print("rest", got)
  local t0 = time.now()
  print("read timeout", s:read(1, "50ms"))
  print("waited", time.now() - t0 >= 0.05)
  print("read_line timeout", s:read_line(0.05))
  print("read_exact timeout", s:read_exact(1, "0.05s"))
  print("zero timeout", s:read(1, 0))
  go:send(true)
  print("too long", s:read_line("5s"))
  print("exact", #s:read_exact(70000, "5s"))
  go:send(true)
  print("last line", s:read_line("5s"))
  print("then", s:read_line("5s"))
  print("read at end", s:read(1))
  print("read_exact at end", s:read_exact(1))
  print("bad n", pcall(s.read, s, 0))
  print("bad timeout", pcall(s.read, s, 1, "soon"))
  print("not a conn", pcall(s.read, {}, 1))
end

function cases.big()
  local n = 300000
  local blob = {}
  for i = 1, n / 10 do blob[i] = string.format("%09d\n", i) end
  blob = table.concat(blob)
  local s = pair(function(c)
    assert(c:write(blob))
    c:close()
  end)
  local got = s:read_exact(n, "10s")
  print("read_exact 300000", #got, got == blob)
  print("then", s:read(1, "5s"))
  -- a write past the queue's bound to a peer that does not read waits, then times out
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local w = assert(net.connect(l:addr()))
  local peer = assert(l:accept("5s"))
  local huge = string.rep("y", 16 * 1024 * 1024)
  local t0 = time.now()
  print("write past the bound", w:write(huge, "200ms"))
  print("waited", time.now() - t0 >= 0.2)
  -- the reader takes it all; the writer's queue drains
  local total, chunk = 0, nil
  repeat
    chunk = peer:read(65536, "5s")
    total = total + (chunk and #chunk or 0)
  until total >= #huge or not chunk
  print("read all", total == #huge)
  print("small write", w:write("z"), peer:read(1, "5s"))
  print("close flushes", w:close("5s"))
  print("peer sees end", peer:read(1, "5s"))
end

function cases.refused()
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local addr = l:addr()
  l:close()
  print("connect", net.connect(addr))
  print("connect with timeout", net.connect(addr, { timeout = "1s" }))
  print("unix", net.connect("unix:///nonexistent/steward-net-spec.sock"))
end

function cases.closing()
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local results = channel.new(10)
  coroutine.spawn(function() results:send({ "accept while closed", l:accept() }) end)
  time.sleep("20ms")
  l:close()
  local r = results:receive()
  print(r[1], r[2], r[3])
  print("accept after close", l:accept())
  print("listener close twice", l:close())
  local s = pair(function(c) process.inbox():receive() end)
  coroutine.spawn(function() results:send({ "read while closed", s:read(1) }) end)
  time.sleep("20ms")
  print("close", s:close())
  r = results:receive()
  print(r[1], r[2], r[3])
  print("write after close", s:write("x"))
  print("peer after close", s:peer())
  -- a connection cannot leave its process: userdata is not sendable
  local s2 = pair(function(c) process.inbox():receive() end)
  print("send conn", process.send(process.pid(), "conn", s2))
  -- two readers at once: the second is told
  coroutine.spawn(function() results:send({ "first reader", s2:read(1, "100ms") }) end)
  time.sleep("10ms")
  print("second reader", s2:read(1))
  r = results:receive()
  print(r[1], r[2], r[3])
  -- a blocking call where no task can wait raises; one that needs no wait works anywhere
  local ok, err = pcall(function()
    local t = { 2, 1 }
    table.sort(t, function(a, b) s2:read(1) return a < b end)
  end)
  print("read in sort", ok, err)
end

-- Each way a process can end closes its sockets: its connection to us reads EOF, its listener
-- refuses.
function cases.ends()
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local inbox = process.inbox()
  for _, how in ipairs { "return", "error", "kill", "link" } do
    local pid = process.spawn("holder", nil, how, l:addr(), process.pid())
    local c = assert(l:accept("5s"))
    local addr = inbox:receive():data()
    if how == "kill" then process.terminate(pid) end
    local v, err = c:read(1, "5s")
    print(how, v, err, net.connect(addr))
    c:close()
  end
end

-- Many connections at once on one listener, each served by its own task in the server.
function cases.many(n)
  n = tonumber(n)
  local addr = assert(echo_server("tcp://127.0.0.1:0"))
  local echoed, all_in, release = channel.new(n), channel.new(), channel.new()
  for i = 1, n do
    coroutine.spawn(function()
      local c, err = net.connect(addr, { timeout = "10s" })
      if not c then echoed:send("connect " .. err) return end
      c:write("hello " .. i .. "\n")
      local line = c:read_line("10s")
      echoed:send(line == "hello " .. i and "ok" or tostring(line))
      release:receive()
      c:close()
    end)
  end
  local ok = 0
  for _ = 1, n do
    local r = echoed:receive()
    if r == "ok" then ok = ok + 1 else print("failed", r) end
  end
  print("echoed", ok)
  local c = assert(net.connect(addr))
  c:write("stats\n")
  print("server", c:read_line("10s"))
  release:close()
  c:write("quit\n")
  c:read_line("10s")
end

function cases.limit()
  local ls, err = {}, nil
  repeat
    local l
    l, err = net.listen("tcp://127.0.0.1:0")
    ls[#ls + 1] = l
  until not l
  print("listeners", #ls, err)
  print("connect at the limit", net.connect(ls[1]:addr()))
  ls[#ls]:close()
  local c = net.connect(ls[1]:addr())
  print("after one closed", c ~= nil)
  for _, l in ipairs(ls) do l:close() end
end

-- __gc closes: a listener dropped and collected refuses connections.
function cases.gc()
  local addr
  do
    local l = assert(net.listen("tcp://127.0.0.1:0"))
    addr = l:addr()
  end
  local refused
  for _ = 1, 200 do
    for _ = 1, 10000 do local _ = { 1, 2, 3 } end
    local c, err = net.connect(addr)
    if not c then refused = err break end
    c:close()
  end
  print("collected", refused)
end

-- Processes with sockets among CPU-bound ones on every worker: idle workers steal the
-- spinners, never a process that owns sockets (debug builds assert each socket call runs on
-- its socket's loop).
function cases.steal(clients, trips)
  clients, trips = tonumber(clients), tonumber(trips)
  local addr = assert(echo_server("tcp://127.0.0.1:0"))
  for _ = 1, 4 do process.spawn("spinner", nil, 3000000) end
  for _ = 1, clients do process.spawn("echo_client", nil, addr, trips, process.pid()) end
  for _ = 1, 4 do process.spawn("spinner", nil, 3000000) end
  local total = 0
  for _ = 1, clients do total = total + process.inbox():receive():data() end
  print("round trips", total)
  local c = assert(net.connect(addr))
  c:write("quit\n")
  c:read_line("10s")
end

-- The run ends while another process has sockets in every state: the host shuts down
-- cleanly (and at once), the unix listener's file is removed.
function cases.leave(path)
  process.spawn("leaver", nil, path, process.pid())
  process.inbox():receive()
  print("left")
end

return function(name, ...)
  local case = cases[name]
  if not case then error("no case " .. tostring(name)) end
  case(...)
end
