-- Runs out of memory inside one builtin, in a code shape that seed picks (limits.memory 1MB).
-- The heap is filled with about 16000 short strings, so LuaJIT's string table is close to
-- doubling, and with ballast, so that the doubling (256 KB) does not fit: the allocation that
-- fails is made inside the builtin, and no collection hook runs before it. LuaJIT's fast
-- functions wrote their error at a stale L->top there, over a live slot of the frames below
-- (a minimal reproducer: a 1 MB limit, the JIT off, tostring(i) in a loop), and the host crashed for some shapes (how many locals, which
-- catcher, how deep): hence many seeds. docs/sandbox-builtins.md.
local CALLS = {
  tostring = "tostring(i + 0.5)",
  sub = "s:sub(i, i + 5)",
  upper = "w[i]:upper()",
  lower = "w[i]:lower()",
  reverse = "w[i]:reverse()",
  char = "string.char(i % 256)",
}

local TEMPLATE = [[
local w = {} for k = 1, %d do w[k] = (k %% 2 == 0 and 'w' or 'W') .. k end
local s = table.concat(w, '', 1, 300)
local b = {} local bk = 0
while collectgarbage('count') * 1024 < %d do bk = bk + 1 b[bk] = ('b'):rep(2000) .. bk end
local out = {} for k = 1, 1000 do out[k] = false end
local function loop() %s for i = 1, 1000 do out[i] = %s end end
local function dive(d)
  %s
  if d == 0 then local ok, e = %s return ok, e end
  local precious = 'precious'
  local ok, e = dive(d - 1)
  if precious ~= 'precious' then return 'corrupted' end
  return ok, e
end
collectgarbage('count')
dive(%d)
-- no allocation failed in the builtin with this shape: fail elsewhere, as every process must
local t = {} while true do t[#t + 1] = ('x'):rep(1000) .. #t end
]]

local function locals(prefix, n)
  local t = {}
  for k = 1, n do t[k] = ("local %s%d = %d"):format(prefix, k, k) end
  return table.concat(t, " ")
end

return function(name, seed)
  local call = assert(CALLS[name], "no such builtin")
  seed = tonumber(seed)
  local function rnd(n)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return math.floor(seed / 65536) % n
  end
  local strings, ballast = 15700 + 100 * rnd(7), 760000 + 1000 * rnd(141)
  local catcher = rnd(2) == 0 and "pcall(loop)" or "xpcall(loop, function(m) return m end)"
  local src = TEMPLATE:format(strings, ballast, locals("m", rnd(9)), call, locals("l", rnd(9)),
                              catcher, rnd(4))
  return assert(load(src, "=oom"))()
end
