-- The main of a handler process: a fresh process of an http.endpoint's function.lua per
-- request (docs/lua-api.md "HTTP server"). The host passes the endpoint's function, the
-- request table (nil when it was answered or its connection closed before this ran; its
-- metatable gives req:json()) and `respond`, a host function that reads the handler's
-- return values and answers this request only. A raised error ends the process: the host
-- then answers 500 and logs the error with its traceback. Nothing here reads a builtin, so a
-- handler that reads none (a hello world) never opens them.
return function(handler, req, respond)
  return function()
    if req ~= nil then respond(handler(req)) end
  end
end
