-- Each case prints what it observed, tab-separated; the spec compares the lines.
local cases = {}

-- Starts the responder; returns its base URL ("http://127.0.0.1:PORT").
local function responder()
  process.spawn("responder", nil, process.pid())
  return process.inbox():receive():data()
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, ",")
end

function cases.basic()
  local base = responder()
  local r = assert(http.get(base .. "/hello"))
  print("get", r.status, r.body, r.headers["content-type"], r.headers["x-twice"], r.headers["content-length"])
  print("header keys", sorted_keys(r.headers))
  r = assert(http.post(base .. "/echo", "a=1&b=2", { headers = { ["Content-Type"] = "application/x-www-form-urlencoded", ["X-Token"] = "t0k" } }))
  local e = json.decode(r.body)
  print("post", r.status, e.method, e.path, e.body, e.headers["content-type"], e.headers["x-token"], e.headers["content-length"])
  r = assert(http.request { method = "PUT", url = base .. "/echo?q=1", body = "put body", headers = { ["x-empty"] = "" } })
  e = json.decode(r.body)
  print("put", r.status, e.method, e.path, e.body, e.headers["x-empty"])
  r = assert(http.request { url = base .. "/echo" })
  e = json.decode(r.body)
  print("request default", e.method, e.body, e.headers.expect)
  r = assert(http.request { method = "DELETE", url = base .. "/echo" })
  print("delete", json.decode(r.body).method)
  r = assert(http.post(base .. "/echo"))
  e = json.decode(r.body)
  print("post without body", e.method, e.headers["content-length"])
  r = assert(http.get(base .. "/missing"))
  print("404", r.status, r.body)
  r = assert(http.request { method = "HEAD", url = base .. "/hello" })
  print("head", r.status, r.body == "", r.headers["content-length"])
end

function cases.redirects()
  local base = responder()
  local r = assert(http.get(base .. "/redirect"))
  print("not followed", r.status, r.headers.location)
  r = assert(http.get(base .. "/redirect", { follow_redirects = true }))
  print("followed", r.status, r.body, r.headers.location)
  print("to file", http.get(base .. "/redirect_file", { follow_redirects = true }))
end

function cases.errors()
  local base = responder()
  print("refused", http.get("http://127.0.0.1:1/x"))
  local t0 = time.now()
  print("timeout", http.get(base .. "/never", { timeout = "200ms" }))
  local waited = time.now() - t0
  print("waited", waited >= 0.19, waited < 2)
  print("big with length", http.get(base .. "/big?2000", { max_body = 1000 }))
  print("big streamed", http.get(base .. "/stream?300000", { max_body = 100000 }))
  local r = assert(http.get(base .. "/stream?300000"))
  print("under the bound", r.status, #r.body)
  r = assert(http.get(base .. "/big?1000", { max_body = 1000 }))
  print("at the bound", #r.body)
  print("file url", http.get("file:///etc/passwd"))
  print("ftp url", http.get("ftp://127.0.0.1/x"))
  print("bad host", http.get("http://[::1/x"))
  print("bad timeout", pcall(http.get, base .. "/hello", { timeout = "soon" }))
  print("bad method", pcall(http.request, { method = "GE T", url = base }))
  print("bad header", pcall(http.get, base, { headers = { ["x-a"] = "1\r\nx-b: 2" } }))
  print("bad max_body", pcall(http.get, base, { max_body = 0 }))
  print("no url", pcall(http.request, {}))
  print("in sort", pcall(table.sort, { 1, 2 }, function() return http.get(base .. "/hello") end))
end

-- n tasks at once, each asking for /slow?ms; prints how many succeeded and the wall time.
function cases.concurrent(n, ms)
  n, ms = tonumber(n), tonumber(ms)
  local base = responder()
  local done = channel.new(n)
  local t0 = time.now()
  for i = 1, n do
    coroutine.spawn(function()
      local r, err = http.get(base .. "/slow?" .. ms)
      done:send(r and r.status == 200 and r.body == "slow" or err)
    end)
  end
  local ok = 0
  for _ = 1, n do
    local v = done:receive()
    if v == true then ok = ok + 1 else print("failed", v) end
  end
  local took = time.now() - t0
  print("ok", ok)
  print("overlapped", took < (n * ms / 1000) / 4, took)
end

-- At most 64 in flight per process.
function cases.limit()
  local base = responder()
  local done = channel.new(64)
  for i = 1, 64 do
    coroutine.spawn(function() done:send((http.get(base .. "/slow?300")) ~= nil) end)
  end
  time.sleep("50ms") -- all 64 have started
  print("65th", http.get(base .. "/hello"))
  local ok = 0
  for _ = 1, 64 do if done:receive() then ok = ok + 1 end end
  print("the 64", ok)
  print("after", (assert(http.get(base .. "/hello")).body))
end

-- A process ends however it ends (return, error, kill) while a task waits for a response:
-- its transfer goes, so the responder sees the client close the connection.
function cases.ends()
  local base = responder()
  local inbox = process.inbox()
  for _, how in ipairs { "return", "error", "kill" } do
    local pid = process.spawn("requester", nil, base .. "/never", process.pid(), how)
    local asked = inbox:receive():topic()
    if how == "kill" then process.terminate(pid) else process.send(pid, "end") end
    print(how, asked, inbox:receive():topic())
  end
end

return function(case, ...)
  return cases[case](...)
end
