-- A caller that ends (or is killed) while its calls run: mode "block" waits in funcs.call,
-- "task" waits in a task while main returns, "async" returns with a call in flight.
return function(mode)
  if mode == "async" then
    funcs.async("slow")
    process.inbox():receive() -- until told to return
    return
  end
  if mode == "task" then
    coroutine.spawn(function() funcs.call("slow") end)
    process.inbox():receive() -- until told to return
    return
  end
  funcs.call("slow")
end
