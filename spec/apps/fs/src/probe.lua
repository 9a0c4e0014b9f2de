-- Tries fs calls under its service's policies once and logs what each returned ("probe").
local function show(v, err) return v == nil and tostring(err) or "ok" end
return function()
  local res = {}
  res.write_public = show(fs.write("fs:data:public/a.txt", "x"))
  res.read_public = show(fs.read("fs:data:public/a.txt"))
  res.write_secret = show(fs.write("fs:data:public/secret.txt", "x"))
  res.read_private = show(fs.read("fs:data:private.txt"))
  res.climb = show(fs.read("fs:data:public/../private.txt")) -- normalized before the check
  res.list_root = show(fs.list("fs:data:"))
  res.no_volume = show(fs.read("fs:nope:x")) -- denied before the lookup: no probing
  res.volume_handle = show(fs.volume("fs:data"):read("private.txt"))
  logger.info("probe", res)
end
