local t = require("t")
-- Scenario 40: B raises -> A (this process, linked) dies too, and the reason names B.
return function(how)
  local me = process.pid()
  local b
  if how == "link" then
    b = process.spawn("child", nil, me, "wait")
    t.expect("up")
    print(process.link(b))
  elseif how == "linker" then -- B links to us
    b = process.spawn("child", nil, me, "linker")
    t.expect("up")
  else
    b = process.spawn_linked("child", nil, me, "wait")
    t.expect("up")
  end
  print("B is " .. b)
  process.send(b, "fail", "B broke")
  -- never returns: the link kills us while we wait
  local m = t.msg(5)
  print("still alive", m and m:topic())
  return 0
end
