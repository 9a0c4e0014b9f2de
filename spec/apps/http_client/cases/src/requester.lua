-- Asks url (which never answers) from a task, then ends as told once its parent says "end":
-- "return" or "error" with the task still waiting; "kill" never ends by itself (its parent
-- terminates it).
return function(url, parent, how)
  coroutine.spawn(function()
    process.send(parent, "result", http.get(url, { timeout = "60s" }))
  end)
  process.inbox():receive()
  if how == "error" then error("ending with a request in flight") end
  if how == "kill" then time.sleep("60s") end
end
