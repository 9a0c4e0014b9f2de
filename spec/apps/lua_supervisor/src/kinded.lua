-- Fails with an error of the given kind.
return function(kind)
  time.sleep("20ms")
  return nil, errors.new { message = "bad " .. kind, kind = kind }
end
