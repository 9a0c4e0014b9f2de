-- One command to the running store, its answer on stdout:
--   steward run examples/key-value -x app:client SET greeting hello
-- The address is the store service's input, read from the registry.
return function(...)
  local addr = registry.get("app:store").data.input[1]
  local conn, err = net.connect(addr, { timeout = "2s" })
  if not conn then error("the store is not running at " .. addr .. ": " .. err, 0) end
  conn:write(table.concat({ ... }, " ") .. "\n")
  local answer = assert(conn:read_line("5s"))
  conn:close()
  print(answer)
  if answer:find("^ERROR") then return 1 end
end
