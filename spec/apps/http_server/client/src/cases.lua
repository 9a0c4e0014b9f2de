-- Each case prints what it observed, tab-separated; the spec compares the lines.
local cases = {}

local function request(method, path, headers, body)
  local lines = { method .. " " .. path .. " HTTP/1.1", "host: spec" }
  for k, v in pairs(headers or {}) do lines[#lines + 1] = k .. ": " .. v end
  if body then lines[#lines + 1] = "content-length: " .. #body end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. (body or "")
end

-- Reads one response: {status, headers (lower-case names), body}, or nil, err. A response to
-- HEAD has no body, whatever its content-length says.
local function response(c, head)
  local line, err = c:read_line("10s")
  if not line then return nil, err end
  local r = { status = tonumber(line:match("^HTTP/1%.1 (%d+)")), headers = {} }
  while true do
    local h = assert(c:read_line("10s"))
    if h == "" then break end
    local k, v = h:match("^([^:]+):%s*(.*)$")
    r.headers[k:lower()] = v
  end
  local n = tonumber(r.headers["content-length"] or "0")
  r.body = n > 0 and not head and assert(c:read_exact(n, "10s")) or ""
  return r
end

local function connect(addr) return assert(net.connect(addr, { timeout = "5s" })) end

-- One request on a new connection.
local function fetch(addr, method, path, headers, body)
  local c = connect(addr)
  assert(c:write(request(method, path, headers, body)))
  local r = assert(response(c, method == "HEAD"))
  c:close()
  return r
end

local function show(name, r)
  print(name, r.status, r.headers["content-type"], r.body)
end

function cases.basic(addr)
  local r = fetch(addr, "GET", "/api/items/42?x=1&name=a+b%21", { ["X-Test"] = "yes" })
  local b = json.decode(r.body)
  print("get", r.status, r.headers["content-type"], r.headers["x-method"], b.method, b.path,
        b.params.id, b.query.x, b.query.name, b.headers.test, b.headers.host, b.remote)
  r = fetch(addr, "PUT", "/api/items/a%20b")
  b = json.decode(r.body)
  print("put", r.status, b.params.id)
  r = fetch(addr, "GET", "/api/items/special")
  print("literal wins", json.decode(r.body).params.id == nil)
  r = fetch(addr, "GET", "/api/files/a/b/c.txt")
  print("rest", json.decode(r.body).params.path)
  r = fetch(addr, "POST", "/api/json", { ["content-type"] = "application/json" }, '{"a":[1,2]}')
  b = json.decode(r.body)
  print("post", r.status, b.body, b.json.a[2])
  r = fetch(addr, "POST", "/api/json", nil, "not json")
  b = json.decode(r.body)
  print("bad json", r.status, b.json == nil, b.json_err ~= nil)
  local c = connect(addr) -- a chunked body
  c:write("POST /api/json HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n" ..
          "4\r\n[1,2\r\n2\r\n,3\r\n1\r\n]\r\n0\r\n\r\n")
  b = json.decode(assert(response(c)).body)
  print("chunked", b.body, #b.json)
  -- expect: 100-continue: the interim answer comes before the body is sent
  c:write("POST /api/json HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n")
  print("continue", c:read_line("5s"), c:read_line("5s") == "")
  c:write("{}")
  print("continued", assert(response(c)).status)
  c:close()
  r = fetch(addr, "GET", "/api/headers")
  local n = 0
  for k in pairs(r.headers) do if k:match("^x%-h%d+$") then n = n + 1 end end
  print("headers", r.status, n, r.headers["content-length"], r.headers.connection, r.body)
  r = fetch(addr, "GET", "/health")
  print("health", r.status, r.headers["content-type"], r.headers["x-served-by"], r.body)
  r = fetch(addr, "HEAD", "/health")
  print("head", r.status, r.headers["content-length"], r.body)
end

function cases.errors(addr)
  show("404", fetch(addr, "GET", "/nope"))
  local r = fetch(addr, "DELETE", "/api/items/1")
  print("405", r.status, r.headers.allow)
  show("raise", fetch(addr, "GET", "/api/raise"))
  show("fail", fetch(addr, "GET", "/api/fail"))
  show("shape", fetch(addr, "GET", "/api/shape"))
  show("number body", fetch(addr, "GET", "/api/shape?body=1"))
  show("413", fetch(addr, "POST", "/api/json", nil, string.rep("x", 2000)))
  show("431", fetch(addr, "GET", "/api/items/1", { ["x-big"] = string.rep("y", 3000) }))
  local c = connect(addr)
  c:write("GARBAGE / HTTP/1.1\r\n\r\n")
  show("400", assert(response(c)))
  print("400 closes", c:read(1, "5s"))
  c:close()
end

-- Three requests in one write on one connection: three answers, in order; then more on it.
function cases.pipeline(addr)
  local c = connect(addr)
  assert(c:write(request("GET", "/api/items/1") .. request("GET", "/health") ..
                 request("GET", "/api/items/3")))
  local got = {}
  for i = 1, 3 do
    local r = assert(response(c))
    got[i] = r.status .. " " .. (r.headers["content-type"] == "application/json"
                                  and json.decode(r.body).params.id or r.body:gsub("\n", ""))
  end
  print("pipelined", table.concat(got, ", "))
  for i = 1, 5 do
    assert(c:write(request("GET", "/api/items/k" .. i)))
    local r = assert(response(c))
    got[i] = json.decode(r.body).params.id
  end
  print("keep-alive", table.concat(got, ","))
  local many = {}
  for i = 1, 200 do many[i] = request("GET", "/api/items/p" .. i) end
  assert(c:write(table.concat(many))) -- 200 in one write: most arrive while others are served
  local in_order = 0
  for i = 1, 200 do
    local r = assert(response(c))
    if json.decode(r.body).params.id == "p" .. i then in_order = in_order + 1 end
  end
  print("200 pipelined", in_order)
  c:write("GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
  local r = assert(response(c))
  print("close asked", r.status, r.headers.connection, c:read(1, "5s"))
end

-- A client sending one byte per second is cut after header_timeout (1.5s) with 408, while
-- other clients are served meanwhile.
function cases.slow(addr, slow)
  slow = tonumber(slow) or 1 -- STEWARD_SLOW: sanitizers make everything slower
  local done = channel.new(1)
  local t0 = time.now()
  coroutine.spawn(function()
    local c = connect(addr)
    local text = request("GET", "/health")
    local cut
    for i = 1, #text do
      if not c:write(text:sub(i, i)) then break end
      local got = c:read_line(1)
      if got then cut = got break end
    end
    done:send({ cut = cut, after = time.now() - t0 })
  end)
  local served = 0
  while time.now() - t0 < 1 do
    if fetch(addr, "GET", "/health").status == 200 then served = served + 1 end
    time.sleep("50ms")
  end
  local r = done:receive()
  print("slow", r.cut, r.after >= 1.4 and r.after < 1.5 + 2.5 * slow)
  print("others served", served >= 2)
end

-- n connections open at once, each sending a request once all are connected.
function cases.many(addr, n)
  n = tonumber(n)
  local conns, results = {}, channel.new(n)
  for i = 1, n do conns[i] = connect(addr) end
  for i = 1, n do
    coroutine.spawn(function()
      local c = conns[i]
      c:write(request("GET", "/api/items/" .. i))
      local r = response(c)
      results:send(r and r.status == 200 and json.decode(r.body).params.id == tostring(i))
      c:close()
    end)
  end
  local ok = 0
  for _ = 1, n do if results:receive() then ok = ok + 1 end end
  print("many", n, ok)
end

-- A request that waits: prints its answer (the drain case starts it, then stops the host).
function cases.slow_request(addr, seconds)
  local r = fetch(addr, "GET", "/api/slow?s=" .. seconds)
  print("slow request", r.status, r.headers.connection, r.body)
end

-- A handler killed mid-request: its request gets 500, the connection stays usable.
function cases.kill(addr)
  local c = connect(addr)
  assert(c:write(request("GET", "/api/hang")))
  local killed
  for _ = 1, 100 do
    local r = fetch(addr, "POST", "/api/kill")
    killed = json.decode(r.body).killed
    if killed then break end
    time.sleep("20ms")
  end
  print("killed", killed)
  local r = assert(response(c))
  print("hung request", r.status, r.body)
  assert(c:write(request("GET", "/health")))
  print("after", assert(response(c)).status)
  c:close()
end

-- Two requests at once on a server whose tree holds one process: one is served, the other
-- gets 503 (its handler cannot start).
function cases.limit(addr)
  local a, b = connect(addr), connect(addr)
  assert(a:write(request("GET", "/slow?s=0.5")))
  time.sleep("100ms")
  assert(b:write(request("GET", "/slow?s=0")))
  print("limit", assert(response(a)).status, assert(response(b)).status)
end

-- One GET: its status and body.
function cases.get(addr, path)
  local r = fetch(addr, "GET", path)
  print("get", r.status, r.body)
end

-- Connecting once the server drains: refused.
function cases.refused(addr)
  print("refused", net.connect(addr, { timeout = "5s" }))
end

-- A request that never gets an answer: prints how the connection ended.
function cases.hang(addr)
  local c = connect(addr)
  assert(c:write(request("GET", "/hang")))
  print("hang", response(c))
end

-- Who the handlers of the guarded and the plain router are.
function cases.who(addr)
  for _, path in ipairs { "/guarded/who", "/plain/who" } do
    local b = json.decode(fetch(addr, "GET", path).body)
    print("who", b.actor, b.connect, b.listen)
  end
end

-- examples/http-api: health, create (and a refused one), list, get, a miss.
function cases.example(addr)
  local r = fetch(addr, "GET", "/health")
  print("health", r.status, r.body)
  r = fetch(addr, "POST", "/v1/items", { ["content-type"] = "application/json" }, '{"name":"apple","note":"red"}')
  local item = json.decode(r.body)
  print("create", r.status, r.headers.location, item.id, item.name)
  r = fetch(addr, "POST", "/v1/items", nil, '{"name":"pear"}')
  print("create", r.status, json.decode(r.body).id)
  r = fetch(addr, "POST", "/v1/items", nil, '{"colour":"green"}')
  print("invalid", r.status, json.decode(r.body).error)
  r = fetch(addr, "POST", "/v1/items", nil, 'not json')
  print("not json", r.status)
  r = fetch(addr, "GET", "/v1/items")
  local list = json.decode(r.body)
  print("list", r.status, list.count, list.items[1].name, list.items[2].name)
  r = fetch(addr, "GET", "/v1/items/2")
  print("get", r.status, json.decode(r.body).name)
  r = fetch(addr, "GET", "/v1/items/9")
  print("miss", r.status, json.decode(r.body).error)
end

-- Authenticated endpoints (spec/apps/http_auth/app): tokens from /mint, then requests with
-- each, with none, with bad ones; each line: tag, status, actor, may delete, challenge. One
-- token lives ttl_ms.
function cases.auth(addr, ttl_ms)
  local function mint(query) return fetch(addr, "POST", "/mint?" .. query).body end
  local function call(tag, method, path, headers)
    local r = fetch(addr, method, path .. "?tag=" .. tag, headers)
    local b = r.status == 401 and { actor = r.body:gsub("\n", "") } or json.decode(r.body)
    print(tag, r.status, b.actor, tostring(b.delete), r.headers["www-authenticate"] or "-")
  end
  local function bearer(t) return { authorization = "Bearer " .. t } end
  local admin, user = mint("user=alice&group=admins"), mint("user=bob&group=users")
  print("tokens", #admin, #user, admin ~= user)
  call("admin", "DELETE", "/api/orders", bearer(admin))
  call("user", "DELETE", "/api/orders", bearer(user))
  call("none", "DELETE", "/api/orders")
  call("unknown", "DELETE", "/api/orders", bearer(("A"):rep(32)))
  call("malformed", "DELETE", "/api/orders", bearer("not a token"))
  call("basic", "DELETE", "/api/orders", { authorization = "Basic " .. admin })
  call("bare", "DELETE", "/api/orders", { authorization = admin })
  call("lower", "DELETE", "/api/orders", { authorization = "bearer   " .. admin .. " " })
  local short = mint("user=carol&group=admins&ttl=" .. ttl_ms .. "ms")
  call("fresh", "DELETE", "/api/orders", bearer(short))
  time.sleep(2 * tonumber(ttl_ms) / 1000)
  call("expired", "DELETE", "/api/orders", bearer(short))
  local gone = mint("user=dave&group=admins")
  call("live", "DELETE", "/api/orders", bearer(gone))
  print("revoke", mint("revoke=" .. gone))
  call("revoked", "DELETE", "/api/orders", bearer(gone))
  call("opt_none", "GET", "/api/optional")
  call("opt_user", "GET", "/api/optional", bearer(user))
  call("opt_admin", "GET", "/api/optional", bearer(admin))
  call("opt_bad", "GET", "/api/optional", bearer(("B"):rep(32)))
  call("open", "GET", "/open/who", bearer(admin))
  call("key_none", "GET", "/open/keyed")
  call("key_admin", "GET", "/open/keyed", { ["x-api-key"] = admin })
  call("key_bearer", "GET", "/open/keyed", { ["x-api-key"] = "Bearer " .. admin })
end

-- n requests with a bad token to one endpoint of spec/apps/http_auth/app: their statuses.
function cases.auth_storm(addr, n)
  local count = {}
  for i = 1, tonumber(n) do
    local r = fetch(addr, "GET", "/open/keyed?tag=storm" .. i, { ["x-api-key"] = ("C"):rep(32) })
    count[r.status] = (count[r.status] or 0) + 1
  end
  for status, k in pairs(count) do print(status, k) end
end

-- examples/secured-api: log in as alice (admin) and bob (customer), list, delete, none, logout.
function cases.secured(addr)
  local function login(user)
    local r = fetch(addr, "POST", "/login", { ["content-type"] = "application/json" },
                    json.encode({ user = user }))
    return r.status, json.decode(r.body)
  end
  local function call(name, method, path, token)
    local r = fetch(addr, method, path, token and { authorization = "Bearer " .. token })
    local b = r.status == 401 and {} or json.decode(r.body)
    print(name, r.status, b.user or b.by or b.logged_out or b.error or r.headers["www-authenticate"],
          b.orders and #b.orders or b.deleted or tostring(b.revoked))
  end
  local _, alice = login("alice")
  local _, bob = login("bob")
  print("login", alice.user, alice.role, bob.user, bob.role, #alice.token)
  local status, body = login("mallory")
  print("unknown", status, body.error)
  call("list bob", "GET", "/api/orders", bob.token)
  call("delete alice", "DELETE", "/api/orders/1", alice.token)
  call("delete bob", "DELETE", "/api/orders/1", bob.token)
  call("no token", "GET", "/api/orders")
  call("logout bob", "POST", "/api/logout", bob.token)
  call("after logout", "GET", "/api/orders", bob.token)
  call("alice still", "GET", "/api/orders", alice.token)
end

return function(case, ...) return cases[case](...) end
