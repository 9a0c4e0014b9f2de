-- Does one job and returns. A "flaky:" job fails until `ready_at` (a lost connection that
-- comes back); a "broken:" job fails with an error marked not retryable (a bad configuration).
return function(job, ready_at)
  local kind = job:match("^(%w+):")
  if kind == "broken" then
    return nil, errors.new { message = "cannot do " .. job, kind = "config", retryable = false }
  end
  if kind == "flaky" and time.now() < ready_at then error("connection lost while doing " .. job, 0) end
  time.sleep("50ms") -- the work
  logger.info("job done", { job = job })
end
