-- A request handler's work, run as the request's identity (process.with_context): it reports
-- who it runs as and what the policies let that identity do. mode "parent" also spawns a
-- handler of its own, which inherits the identity.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

return function(tag, mode)
  local me = security.actor()
  result(tag .. ".actor", me and me:id())
  result(tag .. ".role", me and me:meta().role)
  result(tag .. ".delete", security.can("delete", "orders"))
  result(tag .. ".read", security.can("read", "orders"))
  -- its guarded host calls use the identity too: the gateway may read this entry, it may not
  result(tag .. ".registry", select(2, registry.get("app:public_settings")))
  -- the identity replaces the gateway's rights: it may not mint
  result(tag .. ".mint", select(2, security.new_actor("user:eve")))
  if mode == "parent" then
    local pid, err = process.spawn_monitored("handler", nil, tag .. ".child")
    result(tag .. ".spawn", err or "ok")
    if pid then channel.select { process.events():case_receive(), time.after(10):case_receive() } end
  end
end
