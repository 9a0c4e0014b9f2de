-- A key-value store by message: put {key, value, reply}, get {key, reply}.
return function()
  process.registry.register("kv")
  process.ready()
  local data = {}
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == events then return end -- CANCEL: stop
    local msg = r.value
    local m = msg:data()
    if msg:topic() == "put" then
      data[m.key] = m.value
      process.send("audit", "put", m.key)
      process.send(m.reply, "ok", true)
    elseif msg:topic() == "get" then
      process.send(m.reply, "value", data[m.key])
    end
  end
end
