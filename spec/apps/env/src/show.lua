-- Prints what env.get gives for each name (one line each), then the substituted settings.
local function show(prefix, name)
  local v, err = env.get(name)
  print(prefix, name, type(v), tostring(v), tostring(err))
end

return function()
  local prefix = security.actor() and "guarded" or "plain"
  for _, name in ipairs { "APP_MODE", "NUMBER", "SHARED", "SPEC_ENV_SECRET", "SPEC_ENV_UNSET",
                          "NOT_EXPOSED", "HOME" } do
    show(prefix, name)
  end
  if prefix == "plain" then
    print("raises", pcall(env.get))
    local s = registry.get("env:settings").data
    print("settings", s.url, type(s.port), s.port, s.literal)
  end
  print(prefix .. " done")
end
