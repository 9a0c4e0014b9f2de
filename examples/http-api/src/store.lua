-- The items, held in this process's memory. Requests come as messages (topic = the operation,
-- data = its argument); the answer goes back to the sender with topic "reply".
local items, next_id = {}, 1

local ops = {}

function ops.create(fields)
  if type(fields) ~= "table" or type(fields.name) ~= "string" or fields.name == "" then
    return nil, "an item needs a name"
  end
  local item = { id = next_id, name = fields.name, note = fields.note }
  items[next_id] = item
  next_id = next_id + 1
  return item
end

function ops.list()
  local out = {}
  for id = 1, next_id - 1 do out[#out + 1] = items[id] end
  return out
end

function ops.get(id)
  return items[tonumber(id)]
end

function ops.ping() return "pong" end

return function()
  assert(process.registry.register("store"))
  process.ready()
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == events then
      if r.value.kind == process.event.CANCEL then return end
    else
      local msg = r.value
      local op = ops[msg:topic()]
      if op then process.send(msg:from(), "reply", op(msg:data())) end
    end
  end
end
