-- Installing (docs/operating.md "Installing"): `cmake --install` of the build the specs run
-- puts the binary, the manual page, bash completion, the Lua API annotations, the docs and an
-- example systemd unit under a scratch prefix, and the installed binary runs; the Debian
-- package CPack builds from the same tree holds the same files under /usr. The manual page
-- names every command `steward --help` lists, so a new command cannot be left out of it.
local h = require("spec.lua.steward_helper")

local BUILD = h.steward:match("^(.*)/[^/]+$") or "."

-- Runs a shell command; returns its exit code and its output (stdout and stderr together).
local function sh(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1; echo \"exit=$?\""))
  local out = p:read("*a")
  p:close()
  local body, code = out:match("^(.*)exit=(%d+)\n$")
  return tonumber(code), body
end

local function scratch()
  local _, dir = sh("mktemp -d")
  return (dir:gsub("%s+$", ""))
end

-- The commands of `steward --help`, each one word.
local function commands()
  local names = {}
  for line in h.run("--help").stdout:gmatch("[^\n]+") do
    local name = line:match("^  steward (%l+)")
    if name then names[#names + 1] = name end
  end
  return names
end

-- What an install under root/prefix must hold.
local function assert_installed(root, prefix)
  local p = root .. prefix
  for _, f in ipairs { "/bin/steward", "/share/man/man1/steward.1",
                       "/share/bash-completion/completions/steward", "/share/zsh/site-functions/_steward",
                       "/share/steward/lua-meta/process.d.lua", "/share/steward/registry.schema.json", "/share/doc/steward/lua-api.md",
                       "/share/doc/steward/examples/steward@.service" } do
    assert.is_true(h.exists(p .. f), "not installed: " .. prefix .. f)
  end
  local code, out = sh(h.quote(p .. "/bin/steward") .. " --version")
  assert.are.equal(0, code, out)
  assert.truthy(out:match("^steward %d+%.%d+%.%d+\n$"), out)
  -- the unit starts the binary where this install put it
  local unit = h.read(p .. "/share/doc/steward/examples/steward@.service")
  assert.truthy(unit:find("ExecStart=" .. prefix .. "/bin/steward run ", 1, true), unit)
  assert.are.equal(0, (sh("bash -n " .. h.quote(p .. "/share/bash-completion/completions/steward"))))
end

describe("install", function()
  it("cmake --install puts every file under the prefix, and the binary runs", function()
    local root = scratch()
    local code, out = sh("DESTDIR=" .. h.quote(root) .. " cmake --install " .. h.quote(BUILD) .. " --prefix /opt/sw")
    assert.are.equal(0, code, out)
    assert_installed(root, "/opt/sw")
    sh("rm -rf " .. h.quote(root))
  end)

  it("the manual page names every command of --help", function()
    local page = h.read("man/steward.1")
    local section = page:match("\n%.SH COMMANDS\n(.-)\n%.SH ")
    assert.truthy(section, "man/steward.1 has no COMMANDS section")
    local names = commands()
    assert.is_true(#names >= 9, "--help lists " .. #names .. " commands")
    for _, name in ipairs(names) do
      assert.truthy(section:find("%f[%w]" .. name .. "%f[%W]"), "man/steward.1 does not describe the command " .. name)
    end
  end)

  it("the Debian package holds the same files under /usr", function()
    if sh("command -v dpkg-deb && command -v cpack") ~= 0 then
      pending("dpkg-deb or cpack missing")
      return
    end
    local dir = scratch()
    local code, out = sh("cd " .. h.quote(BUILD) .. " && cpack -G DEB -B " .. h.quote(dir))
    assert.are.equal(0, code, out)
    local deb = out:match("package: (%S+%.deb) generated") or (select(2, sh("ls " .. h.quote(dir) .. "/*.deb")):gsub("%s+$", ""))
    code, out = sh("dpkg-deb -x " .. h.quote(deb) .. " " .. h.quote(dir .. "/root"))
    assert.are.equal(0, code, out)
    assert_installed(dir .. "/root", "/usr")
    local _, info = sh("dpkg-deb -f " .. h.quote(deb) .. " Package Depends")
    assert.truthy(info:find("Package: steward", 1, true), info)
    assert.truthy(info:find("libuv1", 1, true), info)
    sh("rm -rf " .. h.quote(dir))
  end)
end)
