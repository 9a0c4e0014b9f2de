-- io's writes and flushes (docs/lua-api.md "io"), bound by host/lua_api/api_io.c. They are Lua
-- because a write that finds the stream's buffer full blocks its task with time.sleep, and a
-- blocked call resumes in its Lua caller. C gives the primitives: pack(...) (the values as one
-- string, raising on one that is not a string or number), put(stream, s, from, all) (takes
-- what there is room for: the next `from`, whether something still waits, bytes sent),
-- drop(stream), can_wait(), sleep(seconds), now(), stream_of(file, fname); names[stream];
-- stdout; patience (seconds without progress before a waiting write gives up).
local pack, put, drop, can_wait, sleep, now, stream_of, names, stdout, patience = ...

-- Sends s (and with `all` the unfinished line); true once all of it is in the stream's buffer.
-- While the buffer is full the task sleeps, 1 ms doubling to 32 ms; it gives up (dropping what
-- waits) after `patience` seconds in which nothing went out, or at once where it cannot wait.
local function send(stream, s, all)
  local from, waiting, sent = put(stream, s, 0, all)
  if not waiting then return true end
  if not can_wait() then
    drop(stream)
    return false, " is full and this call cannot wait: output dropped"
  end
  local pause, since = 0.001, now()
  repeat
    sleep(pause)
    from, waiting, sent = put(stream, s, from, all)
    if not waiting then return true end
    if sent > 0 then
      since, pause = now(), 0.001
    elseif pause < 0.032 then
      pause = pause * 2
    end
  until now() - since >= patience
  drop(stream)
  return false, " is not keeping up: output dropped after " .. patience .. " s without progress"
end

local function result(file, stream, ok, why)
  if ok then return file end
  return nil, "io: " .. names[stream] .. why
end

local function write(...)
  return result(stdout, 0, send(0, pack(...), false))
end

local function flush()
  return result(stdout, 0, send(0, "", true))
end

local function file_write(file, ...)
  local stream = stream_of(file, "write")
  return result(file, stream, send(stream, pack(...), false))
end

local function file_flush(file)
  local stream = stream_of(file, "flush")
  return result(file, stream, send(stream, "", true))
end

return write, flush, file_write, file_flush
