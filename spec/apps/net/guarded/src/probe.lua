local function result(v, err)
  if v then v:close() return "ok" end
  return tostring(err)
end

return function()
  logger.info("probe", {
    listen_tcp = result(net.listen("tcp://127.0.0.1:0")),
    listen_unix = result(net.listen("unix:///nonexistent/steward-net-spec.sock")),
    connect_tcp = result(net.connect("tcp://127.0.0.1:1")),
    connect_v6 = result(net.connect("tcp://[::1]:1")),
  })
end
