-- A line every 100ms, until cancelled.
return function()
  local tick, events, n = time.ticker("100ms"), process.events(), 0
  while true do
    local r = channel.select { events:case_receive(), tick:channel():case_receive() }
    if r.channel ~= tick:channel() and r.value.kind == process.event.CANCEL then tick:stop() return end
    n = n + 1
    logger.info("tick", { n = n })
  end
end
