-- Files that are not regular files (Hardening): a named pipe where the loader expects a YAML
-- file, a file:// source or the host config is refused at once with an error naming it, never
-- opened for a read that waits for a writer. FIFOs cannot be committed, so each spec makes its
-- own with mkfifo in a temporary copy of an app.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")

-- Well above what any of these takes, even under a sanitizer; a wedged steward hits it (124).
local LIMIT = 10 * C.SLOW

-- `steward ARGS...` under timeout(1): {code, stdout, stderr, elapsed}.
local function run(...)
  local words = { "timeout", "-k", "2", tostring(LIMIT), h.quote(h.steward) }
  for _, a in ipairs({ ... }) do words[#words + 1] = h.quote(a) end
  local out, err = os.tmpname(), os.tmpname()
  local t0 = rt.now()
  local code = rt.exit_code(os.execute(table.concat(words, " ") .. " >" .. out .. " 2>" .. err .. " </dev/null"))
  local r = { code = code, stdout = h.read(out), stderr = h.read(err), elapsed = rt.now() - t0 }
  os.remove(out)
  os.remove(err)
  assert.are_not.equal(124, r.code, "steward hung on a FIFO:\n" .. r.stderr)
  return r
end

local function mkfifo(path)
  assert.is_true(rt.exit_code(os.execute("mkfifo " .. h.quote(path))) == 0, "mkfifo " .. path)
end

-- A fresh copy of spec/apps/control/NAME, removed after the spec.
local function app_copy(name)
  local dir = C.copy_app(name)
  finally(function() os.execute("rm -rf " .. h.quote(dir)) end)
  return dir
end

-- The line and column of the first `source: file://WHAT` value in a YAML text.
local function source_place(yaml, what)
  local n = 0
  for line in (yaml .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local col = line:find("file://" .. what, 1, true)
    if col then return n, col end
  end
end

local function replace_source(dir, from, to)
  local yaml = h.read(dir .. "/app.yaml")
  local changed
  yaml, changed = yaml:gsub("file://" .. from:gsub("%p", "%%%0"), "file://" .. to, 1)
  assert.are.equal(1, changed)
  local f = assert(io.open(dir .. "/app.yaml", "w"))
  f:write(yaml)
  f:close()
  return yaml
end

describe("steward check with a FIFO", function()
  it("named *.yaml in the app directory: fails at once, naming the file", function()
    local dir = app_copy("calm")
    mkfifo(dir .. "/pipe.yaml")
    local r = run("check", dir)
    assert.are.equal(2, r.code, r.stderr)
    assert.are.equal("", r.stdout)
    assert.are.equal(dir .. "/pipe.yaml: cannot read: not a regular file\n1 error\n", r.stderr)
  end)

  it("as a file:// source: fails at once, at the entry's file:line:col", function()
    local dir = app_copy("calm")
    mkfifo(dir .. "/src/pipe.lua")
    local yaml = replace_source(dir, "src/long.lua", "src/pipe.lua")
    local line, col = source_place(yaml, "src/pipe.lua")
    local r = run("check", dir)
    assert.are.equal(2, r.code, r.stderr)
    assert.are.equal(("%s/app.yaml:%d:%d: entry app:long_process field source: file://src/pipe.lua: not a regular file\n1 error\n")
      :format(dir, line, col), r.stderr)
  end)

  it("as the host config: run fails at once, naming the file", function()
    local dir = app_copy("calm")
    local config = C.tmp(".yaml")
    finally(function() os.remove(config) end)
    mkfifo(config)
    local r = run("run", dir, "--config", config)
    assert.are_not.equal(0, r.code)
    assert.truthy(r.stderr:find(config .. ": cannot read the host config", 1, true), r.stderr)
  end)
end)

describe("steward reload with a FIFO", function()
  it("is rejected with the file named; the host keeps answering and stops on SIGTERM", function()
    local dir = app_copy("calm")
    local host = C.launch({ dir = dir, socket = false })
    finally(function() host:cleanup() end)
    local before = host:wait_status("both running", function(by)
      return by["app:db"] and by["app:db"].state == "running" and by["app:slow"]
        and by["app:slow"].state == "running" and by
    end)

    -- a FIFO named *.yaml
    mkfifo(dir .. "/pipe.yaml")
    local r = run("reload", dir)
    assert.are.equal(1, r.code, r.stdout)
    assert.truthy(r.stderr:find("reload failed: nothing changed", 1, true), r.stderr)
    assert.truthy(r.stderr:find("pipe.yaml: cannot read: not a regular file", 1, true), r.stderr)
    os.remove(dir .. "/pipe.yaml")

    -- a FIFO as a file:// source
    mkfifo(dir .. "/src/pipe.lua")
    local line, col = source_place(replace_source(dir, "src/long.lua", "src/pipe.lua"), "src/pipe.lua")
    r = run("reload", dir)
    assert.are.equal(1, r.code, r.stdout)
    assert.truthy(r.stderr:find("reload failed: nothing changed", 1, true), r.stderr)
    assert.truthy(r.stderr:find(("app.yaml:%d:%d: entry app:long_process field source: file://src/pipe.lua: not a regular file")
      :format(line, col), 1, true), r.stderr)

    -- nothing changed, and the host still answers
    local after = host:status()
    for _, s in ipairs(after.services) do
      assert.are.equal("running", s.state)
      assert.are.equal(before[s.id].pid, s.pid)
    end
    host:stop()
  end)
end)
