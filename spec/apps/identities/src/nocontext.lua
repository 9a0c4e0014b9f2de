-- A service without lifecycle.security: in strict mode it may mint nothing.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

return function()
  result("nocontext.new_actor", select(2, security.new_actor("user:alice")))
  result("done", true)
end
