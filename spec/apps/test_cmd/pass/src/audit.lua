-- Counts the puts kv reports; answers "count" with the number.
return function()
  process.registry.register("audit")
  process.ready()
  local puts = 0
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == events then return end -- CANCEL: stop
    local msg = r.value
    if msg:topic() == "put" then puts = puts + 1
    elseif msg:topic() == "count" then process.send(msg:data(), "count", puts) end
  end
end
