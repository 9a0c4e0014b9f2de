-- A tiny HTTP/1.1 responder for the http specs: one request per connection (answers carry
-- "Connection: close"), read with read_line and read_exact, answered by path:
--   /hello            200, a custom header twice, body "hello"
--   /echo             200, body: json of the method, path, request headers and body
--   /missing          404, body "not found"
--   /slow?MS          200 after MS milliseconds
--   /big?N            200, N bytes with a Content-Length; /stream?N: the same without one
--   /redirect         302 to /hello; /redirect_file: 302 to file:///etc/passwd
--   /never            no answer: waits until the client goes, then tells the parent "gone"
-- Sends its address to parent as "addr".
local function respond(c, status, headers, body)
  local head = { "HTTP/1.1 " .. status, "Connection: close" }
  for _, h in ipairs(headers) do head[#head + 1] = h end
  c:write(table.concat(head, "\r\n") .. "\r\n\r\n" .. body)
end

local function serve(c, parent)
  local line = c:read_line("10s")
  if not line then return c:close() end
  local method, target = line:match("^(%S+) (%S+) HTTP/1%.%d$")
  local headers, len = {}, 0
  while true do
    local h = c:read_line("10s")
    if not h or h == "" then break end
    local k, v = h:match("^([^:]+):%s*(.-)%s*$")
    headers[k:lower()] = v
    if k:lower() == "content-length" then len = tonumber(v) end
  end
  local body = len > 0 and c:read_exact(len, "10s") or ""
  local path, query = target:match("^([^?]*)%??(.*)$")
  if path == "/hello" then
    respond(c, "200 OK", { "Content-Type: text/plain", "X-Twice: one", "X-TWICE: two", "Content-Length: 5" }, "hello")
  elseif path == "/echo" then
    local out = json.encode { method = method, path = target, headers = headers, body = body }
    respond(c, "200 OK", { "Content-Type: application/json", "Content-Length: " .. #out }, out)
  elseif path == "/missing" then
    respond(c, "404 Not Found", { "Content-Length: 9" }, "not found")
  elseif path == "/slow" then
    time.sleep(tonumber(query) / 1000)
    respond(c, "200 OK", { "Content-Length: 4" }, "slow")
  elseif path == "/big" then
    respond(c, "200 OK", { "Content-Length: " .. query }, string.rep("x", tonumber(query)))
  elseif path == "/stream" then
    respond(c, "200 OK", {}, string.rep("x", tonumber(query)))
  elseif path == "/redirect" then
    respond(c, "302 Found", { "Location: /hello", "Content-Length: 0" }, "")
  elseif path == "/redirect_file" then
    respond(c, "302 Found", { "Location: file:///etc/passwd", "Content-Length: 0" }, "")
  elseif path == "/never" then
    process.send(parent, "asked")
    c:read(1) -- nil, "closed" once the client goes
    process.send(parent, "gone")
  end
  c:close()
end

return function(parent)
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  coroutine.spawn(function() -- the run -x that spawned it ends: CANCEL stops the accept loop
    local events = process.events()
    repeat local e = events:receive() until e.kind == process.event.CANCEL
    l:close()
  end)
  process.send(parent, "addr", (l:addr():gsub("^tcp://", "http://")))
  while true do
    local c = l:accept()
    if not c then return end
    coroutine.spawn(serve, c, parent)
  end
end
