-- Sends `rounds` pings to the process registered as "pong", one at a time, and logs the rate.
return function(rounds)
  local inbox = process.inbox()
  local started = time.now()
  for i = 1, rounds do
    assert(process.send("pong", "ping", i))
    local reply = inbox:receive()
    assert(reply:topic() == "pong" and reply:data() == i, "out of order")
  end
  local seconds = time.now() - started
  logger.info("ping-pong done", { rounds = rounds, per_second = math.floor(rounds / seconds) })
end
