-- Shared by the specs that run the steward binary: run it with captured stdout, stderr and exit
-- code, read files, list directories. ctest sets STEWARD (the binary) and runs from the repo root.
local M = {}

M.steward = os.getenv("STEWARD") or "build/steward"

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end
M.read = slurp

-- The file's contents, or nil if it cannot be opened (a pid file not yet written, /proc of a
-- process that is gone).
function M.read_if(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- RSS (kB), open fds and threads of a live process, from /proc.
function M.proc_sample(pid)
  local status = M.read_if("/proc/" .. pid .. "/status")
  assert(status, "steward (pid " .. pid .. ") is gone")
  local fds = 0
  local p = io.popen("ls -1 /proc/" .. pid .. "/fd 2>/dev/null")
  for _ in p:lines() do fds = fds + 1 end
  p:close()
  return { rss = tonumber(status:match("VmRSS:%s*(%d+) kB")), fds = fds,
           threads = tonumber(status:match("Threads:%s*(%d+)")) }
end

function M.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Single-quotes a word for sh.
function M.quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs `steward ARGS...` (each argument quoted) and returns {code, stdout, stderr}.
function M.run(...)
  local words = { M.quote(M.steward) }
  for _, a in ipairs({ ... }) do words[#words + 1] = M.quote(a) end
  local out, err = os.tmpname(), os.tmpname()
  local a, b, c = os.execute(table.concat(words, " ") .. " >" .. out .. " 2>" .. err .. " </dev/null")
  local code
  if type(a) == "number" then -- Lua 5.1: the raw wait status
    code = a >= 256 and math.floor(a / 256) or a
  elseif b == "exit" then     -- Lua 5.2: true|nil, "exit"|"signal", code
    code = c
  else
    code = 128 + (c or 0)
  end
  local r = { code = code, stdout = slurp(out), stderr = slurp(err) }
  os.remove(out)
  os.remove(err)
  return r
end

-- A copy of examples/NAME in a fresh directory (without a control socket left in it), with
-- app.yaml patched by gsub(pattern, repl) when given (the pattern must match exactly once).
function M.copy_example(name, pattern, repl)
  local dir = os.tmpname()
  os.remove(dir)
  local example = (os.getenv("SPEC_DIR") or "spec") .. "/../examples/" .. name
  assert(os.execute(("cp -r %s %s"):format(M.quote(example), M.quote(dir))))
  os.remove(dir .. "/.steward.sock")
  if pattern then
    local patched, n = M.read(dir .. "/app.yaml"):gsub(pattern, repl)
    assert(n == 1, "examples/" .. name .. "/app.yaml: the line to patch changed")
    local f = assert(io.open(dir .. "/app.yaml", "wb"))
    f:write(patched)
    f:close()
  end
  return dir
end

-- The names in a directory (hidden ones too, except . and ..), sorted.
function M.list(dir)
  local p = assert(io.popen("ls -1A " .. M.quote(dir)))
  local names = {}
  for name in p:lines() do names[#names + 1] = name end
  p:close()
  table.sort(names)
  return names
end

return M
