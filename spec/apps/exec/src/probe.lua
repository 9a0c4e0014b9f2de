-- Tries exec.run under its service's policies once and logs what each returned ("probe").
return function()
  local echo, e1 = exec.run { cmd = { "echo", "hi" } }
  local ls, e2 = exec.run { cmd = { "ls" } }
  local spawned, e3 = exec.spawn { cmd = { "ls" } }
  logger.info("probe", { echo = echo and echo.stdout or e1, ls = ls and "ran" or e2,
                         spawn = spawned and "ran" or e3 })
end
