-- Starts PER processes for each allocating builtin (or only the one named), WAVE at a time,
-- each running out of memory inside it (src/oom_child.lua), and prints per builtin how many
-- failed with "memory limit exceeded" (any other outcome: printed as it comes).
local NAMES = { "tostring", "sub", "upper", "lower", "reverse", "char" }
local WAVE = 20

return function(per, only)
  per = tonumber(per)
  if only then NAMES = { only } end
  local events = process.events()
  local jobs = {}
  for _, name in ipairs(NAMES) do
    for k = 1, per do jobs[#jobs + 1] = { name, k } end
  end
  local pending, count, next_job = {}, {}, 1
  local running = 0
  while next_job <= #jobs or running > 0 do
    while running < WAVE and next_job <= #jobs do
      local job = jobs[next_job]
      next_job = next_job + 1
      pending[process.spawn_monitored("bi:oom_child", nil, job[1], job[2])] = job[1]
      running = running + 1
    end
    local deadline = time.after("20s")
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then
      print("timeout")
      return
    end
    local ev = r.value
    local name = pending[ev.from]
    if name then
      pending[ev.from] = nil
      running = running - 1
      local err = ev.result and ev.result.error
      if type(err) == "string" and err:find("^memory limit exceeded\n") then
        count[name] = (count[name] or 0) + 1
      else
        print(name, "unexpected", tostring(ev.kind), tostring(ev.result and ev.result.value),
              (tostring(err):gsub("\n.*", "")))
      end
    end
  end
  for _, name in ipairs(NAMES) do print(name, count[name] or 0) end
end
