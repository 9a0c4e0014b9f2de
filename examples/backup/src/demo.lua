-- n backups in a row (default 3): prints each, then the archives kept.
local backup = require("backup")

return function(n)
  local keep = registry.get("app:settings").data.keep
  for _ = 1, tonumber(n) or 3 do
    local done = assert(backup.run(keep))
    print(("archived %s (%d bytes), pruned %d"):format(done.name, done.bytes, done.pruned))
  end
  print("kept: " .. table.concat(assert(backup.archives()), " "))
end
