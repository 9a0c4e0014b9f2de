-- Takes jobs from its inbox and answers each with its result. Job 13 crashes it the first
-- time it is tried (a stand-in for a bad input or a lost connection).
return function(pool)
  local inbox = process.inbox()
  while true do
    local job = inbox:receive():data()
    if job.n == 13 and job.attempt == 1 then error("unlucky job " .. job.n) end
    local sum = 0
    for i = 1, job.n do sum = sum + i * i end
    process.send(pool, "done", job.n, sum)
  end
end
