-- Each case prints what it observed, tab-separated; the spec compares the lines.
local cases = {}

local function show(...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    out[i] = type(v) == "string" and (v:gsub("\n", "\\n")) or tostring(v)
  end
  return table.concat(out, "\t")
end

local function p(label, ...) print(label .. "\t" .. show(...)) end

-- The fields of a result (or nil, err) on one line.
local function res(r, err)
  if not r then return nil, err end
  return ("code=%s signal=%s stdout=%s stderr=%s"):format(tostring(r.code), tostring(r.signal),
    (r.stdout or ""):gsub("\n", "\\n"), (r.stderr or ""):gsub("\n", "\\n"))
end

function cases.run()
  p("echo", res(exec.run { cmd = { "echo", "hello", "world" } }))
  p("no shell", res(exec.run { cmd = { "echo", "$HOME", "a;b", "*" } }))
  p("exit code", res(exec.run { cmd = { "sh", "-c", "echo out; echo err >&2; exit 3" } }))
  p("signal", res(exec.run { cmd = { "sh", "-c", "kill -TERM $$" } }))
  p("stdin", res(exec.run { cmd = { "cat" }, stdin = "fed\nin" }))
  p("no stdin", res(exec.run { cmd = { "cat" } }))
  p("env", res(exec.run { cmd = { "sh", "-c", "echo $FOO; env | cut -d= -f1 | sort | tr '\\n' ' '" },
                         env = { FOO = "bar" } }))
  assert(fs.mkdir("exec:work:sub/dir", { parents = true }))
  p("cwd", res(exec.run { cmd = { "sh", "-c", "pwd >where; echo ok" }, cwd = "exec:work:sub/dir" }),
    fs.read("exec:work:sub/dir/where"):match("/work/sub/dir\n$") ~= nil)
  p("absolute", res(exec.run { cmd = { "/bin/sh", "-c", "echo abs" } }))
  p("not found", exec.run { cmd = { "no-such-program-here" } })
  p("relative", exec.run { cmd = { "./x" } })
  p("bad cwd", exec.run { cmd = { "true" }, cwd = "exec:nope:x" })
  p("missing cwd", exec.run { cmd = { "/bin/sh", "-c", "true" }, cwd = "exec:work:nodir" })
  p("not executable", exec.run { cmd = { "/etc/passwd" } })
  p("empty cmd", pcall(exec.run, { cmd = {} }))
  p("bad arg", pcall(exec.run, { cmd = { "echo", 1 } }))
  p("bad env", pcall(exec.run, { cmd = { "true" }, env = { ["A=B"] = "x" } }))
  p("leftover", res(exec.run { cmd = { "sh", "-c", "sleep 30 & echo started" } }))
end

function cases.timeout()
  local t0 = time.now()
  p("timeout", exec.run { cmd = { "sh", "-c", "sleep 30 & echo $$ >pgid; sleep 30" }, cwd = "exec:work:",
                         timeout = "300ms" })
  p("took less than 5s", time.now() - t0 < 5)
  p("pgid", (fs.read("exec:work:pgid"):gsub("\n", "")))
end

function cases.output()
  p("cap", exec.run { cmd = { "head", "-c", "5000", "/dev/zero" } })
  local r = exec.run { cmd = { "head", "-c", "1024", "/dev/zero" } }
  p("at the cap", #r.stdout)
end

-- With the host's memory cap at 4 MB: 6 MB of output cannot be kept.
function cases.budget()
  p("run", exec.run { cmd = { "head", "-c", "6000000", "/dev/zero" } })
  p("small", #exec.run { cmd = { "head", "-c", "1000", "/dev/zero" } }.stdout)
end

function cases.spawn()
  local h = assert(exec.spawn { cmd = { "sh", "-c", "cat; echo bye >&2; exit 7" } })
  p("tostring", tostring(h):match("^exec.handle: %d+$") ~= nil, h:pid() > 0)
  p("write", h:write("one\n"), h:write("two\n"))
  local got = h:read_stdout()
  while #got < 8 do got = got .. h:read_stdout() end
  p("read", got)
  p("close stdin", h:close_stdin(), h:write("late"))
  p("stderr", h:read_stderr(), h:read_stderr())
  p("stdout end", h:read_stdout())
  local w = h:wait()
  p("wait", w.code, w.signal, h:wait().code)
  p("kill after exit", h:kill())
  local s = assert(exec.spawn { cmd = { "sleep", "30" } })
  p("kill", s:kill("KILL"), s:wait().signal)
  local t = assert(exec.spawn { cmd = { "sleep", "30" }, timeout = "100ms" })
  p("spawn timeout", t:wait())
  -- a stream larger than the pipe buffer: read in pieces, the writer waits meanwhile
  local big = assert(exec.spawn { cmd = { "head", "-c", "1000000", "/dev/zero" } })
  local n = 0
  while true do
    local chunk = big:read_stdout()
    if not chunk then break end
    n = n + #chunk
  end
  p("big", n, big:wait().code)
  -- two tasks waiting on one command: the second is busy
  local b = assert(exec.spawn { cmd = { "sleep", "0.2" } })
  local other
  coroutine.spawn(function() other = show(b:wait()) end)
  p("busy", b:wait().code, other)
  p("bad signal", pcall(s.kill, s, "NOPE"))
end

function cases.limit()
  local hs, err = {}, nil
  for i = 1, 70 do
    local h
    h, err = exec.spawn { cmd = { "sleep", "30" } }
    if not h then break end
    hs[i] = h
  end
  p("commands", #hs, err)
  local waiter
  coroutine.spawn(function() waiter = show(hs[1]:wait()) end)
  time.sleep("10ms")
  p("close", hs[1]:close(), hs[1]:close(), hs[1]:wait())
  time.sleep("10ms")
  p("waiter", waiter)
  p("after one closed", exec.spawn { cmd = { "true" } } ~= nil)
end

-- A process killed while its command runs: the command's whole group goes with it.
function cases.kill()
  local pid = process.spawn("runner")
  while not fs.stat("exec:work:pgid") do time.sleep("10ms") end
  time.sleep("50ms")
  p("terminate", process.terminate(pid))
  p("pgid", (fs.read("exec:work:pgid"):gsub("\n", "")))
end

-- The run ends while another process holds commands and files: the host shuts down cleanly,
-- and the commands' groups are killed all the same.
function cases.leave()
  process.spawn("leaver", nil, process.pid())
  process.inbox():receive()
  p("spawned", (fs.read("exec:work:spawned"):gsub("\n", "")))
  p("ran", (fs.read("exec:work:ran"):gsub("\n", "")))
end

function cases.disabled()
  p("run", exec.run { cmd = { "true" } })
  p("spawn", exec.spawn { cmd = { "true" } })
end

return function(case, ...)
  cases[case](...)
end
