return function()
  print("before")
  process.terminate(process.pid())
  while true do end
end
