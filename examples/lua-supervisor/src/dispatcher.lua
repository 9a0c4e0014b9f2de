-- Starts a worker per job under a one_for_one supervisor: a failed job is retried with
-- backoff (100ms, 200ms, ...) unless its error says retrying cannot help. Logs each child's
-- end state once all have settled, then waits for the supervisor's CANCEL.
return function(jobs)
  local sup = supervisor.start {
    name = "jobs", strategy = "one_for_one", intensity = 10, period = "5s",
    restart = { policy = "on_failure", initial_delay = "100ms", max_delay = "1s", jitter = 0 },
    decide = function(err)
      if type(err) == "table" and err.retryable == false then return "stop" end
      return "restart"
    end,
  }
  local ready_at = time.now() + 0.25 -- the flaky job's connection comes back after 250ms
  for _, job in ipairs(jobs) do assert(sup:start_child("worker", job, ready_at)) end

  repeat -- until no child runs or waits to restart
    time.sleep("50ms")
    local c = sup:count_children()
  until c.running + c.restarting + c.stopping == 0
  for _, c in ipairs(sup:which_children()) do
    logger.info("child settled", { key = c.key, state = c.state, restarts = c.restarts })
  end

  repeat local e = process.events():receive() until e.kind == process.event.CANCEL
  sup:stop()
end
