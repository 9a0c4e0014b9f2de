-- The fs module (docs/lua-api.md "fs") on the real binary: each case runs `steward run -x
-- fs:run CASE` on a fresh copy of spec/apps/fs in a temporary directory (its volumes live
-- there), and compares what the case printed. Also: a guarded service's calls, and the host's
-- open fds after a process holding files is killed.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local host = require("spec.lua.host_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1

-- A copy of the app with data/ (links out/ -> ../outside and in_link -> real.txt), ro/ro.txt,
-- other/ and outside/secret.
local function fresh_app()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute(("mkdir -p %s && cp -r %s/apps/fs/. %s && cd %s && mkdir data ro other outside && " ..
    "printf ro >ro/ro.txt && printf secret >outside/secret && ln -s ../outside data/out && " ..
    "ln -s real.txt data/in_link"):format(h.quote(dir), h.quote(SPEC), h.quote(dir), h.quote(dir))))
  return dir
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function remove(dir) os.execute("rm -rf " .. h.quote(dir)) end

-- Runs a case on a fresh app; returns its stdout lines as a table keyed by label, and the dir.
local function run(case, args, options)
  local dir = fresh_app()
  local words = { case }
  for _, a in ipairs(args or {}) do words[#words + 1] = a end
  local r = rt.ok(rt.run(nil, "fs:run", words, { dir = dir, options = options, limit = 30 * SLOW }))
  local got = {}
  for _, line in ipairs(rt.lines(r.stdout)) do
    local label, rest = line:match("^([^\t]*)\t?(.*)$")
    got[label] = rest
  end
  return got, dir
end

describe("fs", function()
  it("reads, writes, appends, stats, lists, makes, renames and removes", function()
    local got, dir = run("basics")
    remove(dir)
    assert.are.equal("true", got.write)
    assert.are.equal("true", got.append)
    assert.are.equal("hello\\nworld\\n", got.read)
    assert.are.equal("true\t", got.empty)
    assert.are.equal("true\ttrue", got.mode)
    assert.are.equal("file\t12\ttrue\ttrue", got.stat)
    assert.are.equal("directory", got["stat dir"])
    assert.are.equal("true", got.mkdir)
    assert.are.equal("nil\tfs:data:d: file already exists", got["mkdir again"])
    assert.are.equal("true\ttrue", got["mkdir parents"])
    assert.are.equal("nil\tfs:data:x/y: no such file or directory", got["mkdir missing parent"])
    assert.are.equal("a.txt:file,d:directory,empty:file,in_link:symlink,out:symlink,secret:file", got.list)
    assert.are.equal("f:directory", got["list sub"])
    assert.are.equal("nil\tfs:data:a.txt: not a directory", got["list file"])
    assert.are.equal("true\te:directory,moved:file", got.rename)
    assert.are.equal("true\ts", got["rename across"])
    assert.are.equal("true\tnil\tfs:data:d/moved: no such file or directory", got.remove)
    assert.are.equal("nil\tfs:data:d: directory not empty", got["remove full dir"])
    assert.are.equal("true\tnil\tfs:data:d/e/f: no such file or directory", got["remove empty dir"])
    assert.are.equal("nil\tfs:data:: the volume's root", got["remove root"])
    assert.are.equal("nil\tfs:data:nope.txt: no such file or directory", got["read missing"])
    assert.are.equal("nil\tfs:data:d: illegal operation on a directory", got["read dir"])
    assert.are.equal("hello\\nworld\\n", got["slashes and dots"])
    assert.are.equal("fs.volume: fs:data\thello\\nworld\\n\ttrue\t1", got.volume)
    assert.are.equal("true\tv\ttrue", got["volume rename"])
    assert.are.equal("nil\tno such volume: fs:nope", got["volume missing"])
    assert.are.equal("nil\tno such volume: fs:nope", got["no volume"])
    assert.are.equal('nil\tbad path "data.txt": expected volume_id:path', got["bad path"])
    assert.are.equal("nil\tno such volume: fs:run", got["not a volume"])
  end)

  it("open files: read, read_line, write, seek, append, close", function()
    local got, dir = run("file")
    remove(dir)
    assert.are.equal("fs.file: fs:data:f.txt", got.tostring)
    assert.are.equal("true\ttrue", got.write)
    assert.are.equal("nil\tnot open for reading", got["read on w"])
    assert.are.equal("true\ttrue\tfs.file: fs:data:f.txt (closed)", got.close)
    assert.are.equal("nil\tclosed", got["after close"])
    assert.are.equal("one\ttwo\tthree\tnil\teof", got.lines)
    assert.are.equal("5\ttwo\t8\t", got.seek) -- read_line after "two": the rest of that line
    assert.are.equal("14\tnil\teof", got["seek end"])
    assert.are.equal("nil\tnot open for writing", got["write on r"])
    -- the write lands right after the line read, not after the read-ahead
    assert.are.equal("one\ttrue\t0\tone\\r\\nTWO\\nthree", got["r+"])
    assert.are.equal("true\ttrue\tone\\r\\nTWO\\nthree\\nfour", got.a)
    assert.are.equal("nil\tfs:data:nope.txt: no such file or directory", got["open missing"])
    assert.matches('^false\t.*expected a mode: "r", "w", "a", "r%+", "w%+" or "a%+"', got["bad mode"])
    assert.are.equal("nil\tfs:data:long.txt: line too long (at most 65536 bytes)", got["long line"])
    assert.are.equal("65536\t4469", got["then read"])
    assert.are.equal("10\tnil\tbusy: another task is using the file", got.busy)
  end)

  it("never leaves a volume: .. is refused, links are not followed", function()
    local got, dir = run("escape")
    assert.are.equal('nil\tbad path "fs:data:../ro/ro.txt": it leaves the volume', got.dotdot)
    assert.are.equal('nil\tbad path "fs:data:a/../../x": it leaves the volume', got["dotdot deep"])
    assert.are.equal("nil\tfs:data:out/secret: symbolic links are not followed", got["link dir"])
    assert.are.equal("nil\tfs:data:out/new: symbolic links are not followed", got["link write"])
    assert.are.equal("nil\tfs:data:out: symbolic links are not followed", got["link list"])
    assert.are.equal("nil\tfs:data:out/made: symbolic links are not followed", got["link mkdir"])
    assert.are.equal("nil\tfs:data:out/secret: symbolic links are not followed", got["link open"])
    assert.are.equal("symlink", got["link stat"])
    assert.are.equal("true\tnil\tfs:data:in_link: symbolic links are not followed", got["inner link"])
    assert.are.equal("in_link:symlink,out:symlink,real.txt:file", got["list shows links"])
    assert.are.equal("true\tnil\tfs:data:out: no such file or directory", got["remove link"])
    -- nothing outside was touched: the link went, its target stayed
    assert.are.equal("secret", h.read(dir .. "/outside/secret"))
    local ls = io.popen("ls -A " .. h.quote(dir .. "/outside")):read("*a")
    assert.are.equal("secret\n", ls)
    remove(dir)
  end)

  it("a read-only volume refuses every change", function()
    local got, dir = run("readonly")
    remove(dir)
    assert.are.equal("ro", got.read)
    assert.are.equal("nil\tread-only volume: fs:ro", got.write)
    assert.are.equal("nil\tread-only volume: fs:ro", got.mkdir)
    assert.are.equal("nil\tread-only volume: fs:ro", got.remove)
    assert.are.equal("nil\tread-only volume: fs:ro", got["rename into"])
    assert.are.equal("nil\tread-only volume: fs:ro", got["rename out"])
    assert.are.equal("nil\tread-only volume: fs:ro", got["open w"])
    assert.are.equal("nil\tread-only volume: fs:ro", got["open r+"])
    assert.are.equal("ro", got["open r"])
  end)

  it("bounds open files per process and whole-file reads (limits.fs_read)", function()
    local conf = os.tmpname()
    write(conf, "limits: { fs_read: 1KB }\n")
    local got, dir = run("limits", nil, { "--config", conf })
    os.remove(conf)
    remove(dir)
    assert.are.equal("256\ttoo many open files (at most 256 per process)", got["open files"])
    assert.are.equal("true", got["after one closed"])
    assert.are.equal("nil\tfs:data:big: file too large (at most 1024 bytes)", got["read cap"])
  end)

  it("what a read holds outside the heap counts in the host's memory cap", function()
    local conf = os.tmpname()
    write(conf, "limits: { memory: 4MB }\n")
    local got, dir = run("budget", nil, { "--config", conf })
    os.remove(conf)
    remove(dir)
    assert.are.equal("nil\tfs:data:big: host memory limit reached", got.read)
    assert.are.equal("65536", got["read in pieces"])
  end)

  it("many tasks read at once, each blocking only itself", function()
    local got, dir = run("tasks", { 500 })
    remove(dir)
    assert.are.equal(tostring(500 * 501 / 2), got.sum)
  end)

  it("fs.read and fs.write are guarded on the normalized path, before the lookup", function()
    local dir = fresh_app()
    write(dir .. "/data/private.txt", "p")
    assert(os.execute("mkdir " .. h.quote(dir .. "/data/public")))
    host.with_app("fs", function(hst)
      local ev = hst:wait("the probe", function(events)
        for _, e in ipairs(events) do if e.msg == "probe" then return e end end
      end)
      assert.are.equal("ok", ev.write_public)
      assert.are.equal("ok", ev.read_public)
      assert.are.equal("permission denied: fs.write on fs:data:public/secret.txt", ev.write_secret)
      assert.are.equal("permission denied: fs.read on fs:data:private.txt", ev.read_private)
      assert.are.equal("permission denied: fs.read on fs:data:private.txt", ev.climb)
      assert.are.equal("permission denied: fs.read on fs:data:", ev.list_root)
      assert.are.equal("permission denied: fs.read on fs:nope:x", ev.no_volume)
      assert.are.equal("permission denied: fs.read on fs:data:private.txt", ev.volume_handle)
      hst:stop()
    end, dir)
    remove(dir)
  end)

  it("a process killed while it holds files leaves no fd behind", function()
    local dir = fresh_app()
    rt.with_driven(dir, "fs:kill", function(d)
      local baseline = d.fds()
      assert.are.equal("opened 20\n", d.ask("open"))
      local open = d.fds()
      assert.is_true(open >= baseline + 20, ("fds: %d at baseline, %d with files"):format(baseline, open))
      assert.are.equal("killed\n", d.ask("kill"))
      rt.wait_fds(d, baseline)
    end)
    remove(dir)
  end)
end)
