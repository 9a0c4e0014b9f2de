local t = require("t")
return function()
  local me = process.pid()
  local c = process.spawn("child", nil, me, "wait")
  t.expect("up")
  -- to a pid: the reply shows topic, sender and values
  print(process.send(c, "ping", "one"))
  local m = t.expect("pong")
  print(m:topic(), m:from() == c, t.shown(m:data()))
  -- payload():data() and data() agree
  print(t.shown(m:payload():data()))
  -- several values, nested tables, nils between
  print(process.send(c, "ping", 1, nil, { deep = { er = { est = { "x", true } } } }, "last"))
  m = t.expect("pong")
  print(t.shown(m:data()))
  -- only a topic: no values
  print(process.send(me, "empty"))
  m = t.expect("empty")
  print(select("#", m:data()), m:from() == me)
  -- a message is a copy: changing the sent table later changes nothing
  local tbl = { n = 1 }
  process.send(me, "copy", tbl)
  tbl.n = 2
  local got = t.expect("copy"):data()
  print(got.n, got ~= tbl)
  -- a large message (kept outside the state until read) reads the same as a small one
  process.send(me, "large", string.rep("x", 4000), { n = 7 })
  local big = t.expect("large")
  local s, tb = big:data()
  print(big:topic(), big:from() == me, #s, tb.n, #big:payload():data())
  -- each message reads its own topic and sender, whatever was read before (topic() and
  -- from() keep the last string they made): same-length topics, two senders, reread
  process.send(me, "aa", 1)
  process.send(me, "ab", 2)
  local m1, m2 = t.expect("aa"), t.expect("ab")
  process.send(c, "ping", 3)
  local m3 = t.expect("pong")
  print(m2:topic(), m1:topic(), m3:topic(), m2:topic(), m3:from() == c, m1:from() == me,
        m3:from() == c, m2:from() == me)
  -- to a registered name
  assert(process.registry.register("send_target", c))
  print(process.send("send_target", "ping", "by name"))
  m = t.expect("pong")
  print(m:from() == c, t.shown(m:data()))
  -- inbox() and events() are the same channel every time
  print(process.inbox() == process.inbox(), process.events() == process.events(), process.inbox() ~= process.events())
  -- to a name nobody holds, to a pid that never existed, to a dead pid
  print(process.send("nobody", "x", 1))
  print(process.send("host|0x7fff", "x", 1))
  process.monitor(c)
  process.send(c, "return")
  print(t.event().kind)
  print(process.send(c, "x", 1))
  print(process.send("send_target", "x", 1))
  -- bad arguments raise
  local ok, e = pcall(function() local r = process.send(me) return r end)
  print(ok, (e:gsub("^.-: ", "")))
  ok, e = pcall(function() local r = process.send(nil, "x") return r end)
  print(ok, (e:gsub("^.-: ", "")))
  print(t.poll(process.inbox()))
end
