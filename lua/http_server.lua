-- The process of every http.service (docs/registry.md "http.service"). The host passes `srv`,
-- its server, an object only this chunk sees (host/lua_api/api_http_server.c): sockets,
-- parsing, limits and handlers are the host's, on this process's worker. This listens, serves
-- until the supervisor asks it to stop, then drains: no new connections, and each request in
-- flight is answered before its connection closes (the supervisor's stop_timeout bounds it).
return function(srv)
  return function()
    local ok, err = srv:start()
    if not ok then return nil, err end
    logger.info("listening", { address = srv:address() })
    process.ready()
    local events = process.events()
    repeat
      local e = events:receive()
    until e.kind == process.event.CANCEL
    srv:drain()
    -- Once per stop: polling the count is simpler than a wake-up from every connection's end.
    while srv:connections() > 0 do time.sleep("5ms") end
  end
end
