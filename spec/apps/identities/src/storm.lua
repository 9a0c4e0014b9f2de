-- Denied in a loop: the audit log must not repeat it without end.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

return function()
  local denied = 0
  for _ = 1, 500 do
    if not registry.get("app:public_settings") then denied = denied + 1 end
  end
  result("storm.denied", denied)
  -- a different denial after the storm is written, and tells how many were held back
  result("storm.after", select(2, security.new_actor("user:storm")))
  result("done", true)
end
