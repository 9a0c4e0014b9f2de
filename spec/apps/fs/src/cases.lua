-- Each case prints what it observed, tab-separated; the spec compares the lines. The spec made
-- data/ (empty), ro/ (holding ro.txt), other/, and outside/secret beside them, with the link
-- data/out -> ../outside.
local cases = {}

-- Strings shown on one line; nil and booleans as words.
local function show(...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    out[i] = type(v) == "string" and (v:gsub("\r", "\\r"):gsub("\n", "\\n")) or tostring(v)
  end
  return table.concat(out, "\t")
end

local function p(label, ...) print(label .. "\t" .. show(...)) end

local function names(list)
  local out = {}
  for _, e in ipairs(list) do out[#out + 1] = e.name .. ":" .. e.type end
  return table.concat(out, ",")
end

function cases.basics()
  p("write", fs.write("fs:data:a.txt", "hello\n"))
  p("append", fs.write("fs:data:a.txt", "world\n", { append = true }))
  p("read", fs.read("fs:data:a.txt"))
  p("empty", fs.write("fs:data:empty", ""), fs.read("fs:data:empty"))
  p("mode", fs.write("fs:data:secret", "s", { mode = "0600" }), fs.stat("fs:data:secret").mode == tonumber("600", 8))
  local st = fs.stat("fs:data:a.txt")
  p("stat", st.type, st.size, st.mode == tonumber("644", 8), st.mtime > 1.6e9)
  p("stat dir", fs.stat("fs:data:").type)
  p("mkdir", fs.mkdir("fs:data:d"))
  p("mkdir again", fs.mkdir("fs:data:d"))
  p("mkdir parents", fs.mkdir("fs:data:d/e/f", { parents = true }), fs.mkdir("fs:data:d/e/f", { parents = true }))
  p("mkdir missing parent", fs.mkdir("fs:data:x/y"))
  p("list", names(fs.list("fs:data:")))
  p("list sub", names(fs.list("fs:data:d/e")))
  p("list file", fs.list("fs:data:a.txt"))
  p("rename", fs.rename("fs:data:empty", "fs:data:d/moved"), names(fs.list("fs:data:d")))
  p("rename across", fs.rename("fs:data:secret", "fs:other:secret"), fs.read("fs:other:secret"))
  p("remove", fs.remove("fs:data:d/moved"), fs.stat("fs:data:d/moved"))
  p("remove full dir", fs.remove("fs:data:d"))
  p("remove empty dir", fs.remove("fs:data:d/e/f"), fs.stat("fs:data:d/e/f"))
  p("remove root", fs.remove("fs:data:"))
  p("read missing", fs.read("fs:data:nope.txt"))
  p("read dir", fs.read("fs:data:d"))
  p("slashes and dots", fs.read("fs:data:/d/../a.txt"))
  local v = assert(fs.volume("fs:data"))
  p("volume", tostring(v), v:read("a.txt"), v:write("v.txt", "v"), v:stat("v.txt").size)
  p("volume rename", v:rename("v.txt", "w.txt"), v:read("w.txt"), v:remove("w.txt"))
  p("volume missing", fs.volume("fs:nope"))
  p("no volume", fs.read("fs:nope:x"))
  p("bad path", fs.read("data.txt"))
  p("not a volume", fs.read("fs:run:x"))
end

function cases.file()
  local f = assert(fs.open("fs:data:f.txt", "w"))
  p("tostring", tostring(f))
  p("write", f:write("one\r\ntwo\n"), f:write("three"))
  p("read on w", f:read(1))
  p("close", f:close(), f:close(), tostring(f))
  p("after close", f:write("x"))
  f = assert(fs.open("fs:data:f.txt"))
  p("lines", f:read_line(), f:read_line(), f:read_line(), f:read_line())
  p("seek", f:seek("set", 5), f:read(3), f:seek(), f:read_line())
  p("seek end", f:seek("end"), f:read(10))
  p("write on r", f:write("x"))
  f:close()
  f = assert(fs.open("fs:data:f.txt", "r+"))
  p("r+", f:read_line(), f:write("TWO"), f:seek("set", 0), f:read(100))
  f:close()
  f = assert(fs.open("fs:data:f.txt", "a"))
  p("a", f:write("\nfour"), f:close(), fs.read("fs:data:f.txt"))
  p("open missing", fs.open("fs:data:nope.txt"))
  p("bad mode", pcall(fs.open, "fs:data:f.txt", "rw"))
  -- a line longer than 64 KB: refused, its bytes stay readable
  assert(fs.write("fs:data:long.txt", string.rep("x", 70000) .. "\nend\n"))
  f = assert(fs.open("fs:data:long.txt"))
  local line, err = f:read_line()
  p("long line", line, err)
  p("then read", #f:read(70000), #f:read(70000)) -- the read-ahead first, then the rest
  f:close()
  -- two tasks on one file: the second is told it is busy
  f = assert(fs.open("fs:data:long.txt"))
  local other
  coroutine.spawn(function() other = show(f:read(10)) end)
  local mine = #f:read(10) -- blocks: the other task runs meanwhile
  time.sleep("50ms")
  p("busy", mine, other)
  f:close()
end

function cases.escape()
  p("dotdot", fs.read("fs:data:../ro/ro.txt"))
  p("dotdot deep", fs.write("fs:data:a/../../x", "x"))
  p("link dir", fs.read("fs:data:out/secret"))
  p("link write", fs.write("fs:data:out/new", "x"))
  p("link list", fs.list("fs:data:out"))
  p("link mkdir", fs.mkdir("fs:data:out/made", { parents = true }))
  p("link open", fs.open("fs:data:out/secret"))
  p("link stat", fs.stat("fs:data:out").type)
  p("inner link", fs.write("fs:data:real.txt", "r"), fs.read("fs:data:in_link"))
  p("list shows links", names(fs.list("fs:data:")))
  p("remove link", fs.remove("fs:data:out"), fs.stat("fs:data:out"))
end

function cases.readonly()
  p("read", fs.read("fs:ro:ro.txt"))
  p("write", fs.write("fs:ro:new.txt", "x"))
  p("mkdir", fs.mkdir("fs:ro:d"))
  p("remove", fs.remove("fs:ro:ro.txt"))
  p("rename into", fs.rename("fs:data:x", "fs:ro:x"))
  p("rename out", fs.rename("fs:ro:ro.txt", "fs:data:x"))
  p("open w", fs.open("fs:ro:ro.txt", "w"))
  p("open r+", fs.open("fs:ro:ro.txt", "r+"))
  local f = assert(fs.open("fs:ro:ro.txt", "r"))
  p("open r", f:read(100))
end

function cases.limits()
  local files, err = {}, nil
  for i = 1, 300 do
    local f
    f, err = fs.open("fs:data:f" .. i, "w")
    if not f then break end
    files[i] = f
  end
  p("open files", #files, err)
  files[1]:close()
  p("after one closed", fs.open("fs:data:f1", "r") ~= nil)
  assert(fs.write("fs:data:big", string.rep("b", 2048)))
  p("read cap", fs.read("fs:data:big"))
end

-- With the host's memory cap at 4 MB: a 6 MB file cannot be read whole, nor written.
function cases.budget()
  local f = assert(fs.open("fs:data:big", "w"))
  local chunk = string.rep("m", 65536)
  for _ = 1, 96 do assert(f:write(chunk)) end
  f:close()
  p("read", fs.read("fs:data:big"))
  local f2 = assert(fs.open("fs:data:big"))
  p("read in pieces", #f2:read(65536))
end

-- Many reads at once from many tasks: each blocks only itself.
function cases.tasks(n)
  n = tonumber(n)
  for i = 1, n do assert(fs.write("fs:data:t" .. i, tostring(i))) end
  local ch = channel.new(n)
  for i = 1, n do coroutine.spawn(function() ch:send(fs.read("fs:data:t" .. i)) end) end
  local sum = 0
  for _ = 1, n do
    local v = ch:receive()
    sum = sum + tonumber(v)
  end
  p("sum", sum)
end

return function(case, ...)
  cases[case](...)
end
