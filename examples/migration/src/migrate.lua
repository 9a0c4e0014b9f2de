-- Applies each step of the plan in order, then tells the supervisor it is ready (its
-- dependents start) and returns. A step that fails raises: the run fails and is retried, and
-- nothing that depends on it starts meanwhile.
return function()
  local me = registry.get("app:migrate").data
  local plan = registry.get(me.config.plan).data.steps
  for i, step in ipairs(plan) do
    time.sleep("100ms") -- the work of one step
    logger.info("migrated", { step = i, of = #plan, what = step })
  end
  process.ready()
end
