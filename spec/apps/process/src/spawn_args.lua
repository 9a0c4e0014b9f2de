local t = require("t")
return function()
  local me = process.pid()
  local nested = { a = { b = { c = 3 } }, list = { 1, 2, 3 }, [10] = "ten"}
  assert(process.spawn("child", nil, me, "echo", 1, "two", nested, true, false, nil, 2.5, -7))
  print(t.shown(t.expect("args"):data()))
  -- no arguments at all
  assert(process.spawn("child", nil, me, "echo"))
  print(t.shown(t.expect("args"):data()))
  -- trailing nils are counted
  assert(process.spawn("child", nil, me, "echo", nil, nil))
  print(t.shown(t.expect("args"):data()))
end
