local t = require("t")
-- Two senders each send 1..N to us; every sender's sequence arrives in order, and all arrive.
-- One runs on our worker, the other on the `pool` host's threads, in parallel with us.
return function(n)
  n = tonumber(n) or 10000
  local me = process.pid()
  local a = process.spawn("child", nil, me, "sender", me, n)
  local b = process.spawn("child", "pool", me, "sender", me, n)
  local next_of = { [a] = 1, [b] = 1 }
  local got, bad, sent = 0, 0, 0
  while got < 2 * n or sent < 2 do
    local m = t.msg(5)
    if not m then print("timeout", got, sent) return 1 end
    if m:topic() == "seq" then
      local i = m:data()
      if next_of[m:from()] ~= i then bad = bad + 1 end
      next_of[m:from()] = i + 1
      got = got + 1
    elseif m:topic() == "sent" then
      sent = sent + 1
    end
  end
  print(got, bad, next_of[a] - 1, next_of[b] - 1)
end
