-- String work: building, formatting, finding and substituting, as a templating service does.
return function(n)
  local total = 0
  for i = 1, n do
    local parts = {}
    for k = 1, 20 do parts[k] = string.format("%s=%d", "key" .. k, i * k) end
    local line = table.concat(parts, "&")
    local s = line:gsub("key(%d+)", "k%1"):upper()
    total = total + #s + (s:find("K7=", 1, true) or 0)
  end
  return total
end
