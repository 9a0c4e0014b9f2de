-- Asks the store (a registered process) and waits for its reply: value, or nil, err.
local M = {}

function M.call(op, arg)
  local ok, err = process.send("store", op, arg)
  if not ok then return nil, err end
  local r = channel.select { process.inbox():case_receive(), time.after("2s"):case_receive() }
  if r.channel ~= process.inbox() then return nil, "the store did not answer" end
  return r.value:data()
end

return M
