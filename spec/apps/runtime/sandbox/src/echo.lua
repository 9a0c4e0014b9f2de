-- Answers every message with a "pong" carrying its data back.
return function()
  local inbox = process.inbox()
  while true do
    local msg = inbox:receive()
    process.send(msg:from(), "pong", msg:data())
  end
end
