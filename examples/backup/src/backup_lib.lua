-- One backup: tar the data volume (run in it, writing the archive to stdout), store the archive
-- in the archives volume under the next number, then remove all but the newest `keep`.
local M = {}

local PATTERN = "^backup%-(%d+)%.tar%.gz$"

-- The archives, oldest first (names sort by number: they are zero-padded).
function M.archives()
  local list, err = fs.list("app:archives:")
  if not list then return nil, err end
  local names = {}
  for _, e in ipairs(list) do
    if e.type == "file" and e.name:match(PATTERN) then names[#names + 1] = e.name end
  end
  table.sort(names)
  return names
end

function M.run(keep)
  local names = assert(M.archives())
  local last = names[#names] and tonumber(names[#names]:match(PATTERN)) or 0
  local r, err = exec.run { cmd = { "tar", "czf", "-", "." }, cwd = "app:data:", timeout = "60s" }
  if not r then return nil, "tar: " .. err end
  if r.code ~= 0 then return nil, ("tar exited with %s: %s"):format(tostring(r.code or r.signal), r.stderr) end
  local name = ("backup-%06d.tar.gz"):format(last + 1)
  local ok, werr = fs.write("app:archives:" .. name, r.stdout)
  if not ok then return nil, werr end
  names[#names + 1] = name
  local pruned = 0
  while #names > keep do
    assert(fs.remove("app:archives:" .. table.remove(names, 1)))
    pruned = pruned + 1
  end
  return { name = name, bytes = #r.stdout, pruned = pruned, kept = #names }
end

return M
