-- Runs a command that writes its process group's id to work:pgid and then waits, with a
-- background child of its own in the group; never returns (its parent kills it).
return function()
  exec.run { cmd = { "sh", "-c", "sleep 60 & echo $$ >pgid; sleep 60" }, cwd = "exec:work:" }
end
