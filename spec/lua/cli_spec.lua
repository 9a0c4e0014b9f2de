-- The command line (docs/operating.md): help and version, usage errors (exit 2, usage on stderr, nothing
-- on stdout), options before or after DIR, and what happens when DIR is missing or wrong.
local h = require("spec.lua.steward_helper")

local GOOD = "spec/corpus/good/04-namespaces"
local OK = "ok: 5 entries, 3 services\n"

local function starts(prefix, s)
  assert.are.equal(prefix, s:sub(1, #prefix))
end

-- A usage error: exit 2, nothing on stdout, "steward: MESSAGE", a blank line, then a usage text.
local function usage_error(r, message, usage)
  assert.are.equal(2, r.code)
  assert.are.equal("", r.stdout)
  starts("steward: " .. message .. "\n\n" .. usage, r.stderr)
end

describe("steward CLI", function()
  it("--help prints the usage with every command and option on stdout", function()
    local r = h.run("--help")
    assert.are.equal(0, r.code)
    assert.are.equal("", r.stderr)
    starts("usage: steward COMMAND [OPTIONS] [DIR]\n", r.stdout)
    for _, word in ipairs { "steward run DIR", "steward check DIR", "steward graph DIR [--format text|dot|mermaid] [--why] [--json]",
                            "steward status", "steward reload", "--log-format text|json", "--log-level LEVEL",
                            "--config FILE" } do
      assert.is_truthy(r.stdout:find(word, 1, true), "--help does not mention " .. word)
    end
    assert.are.same(r, h.run("-h"))
    assert.are.same(r, h.run("help"))
  end)

  it("--version prints the version", function()
    local r = h.run("--version")
    assert.are.equal(0, r.code)
    assert.are.equal("", r.stderr)
    assert.is_truthy(r.stdout:match("^steward %d+%.%d+%.%d+\n$"), r.stdout)
    assert.are.same(r, h.run("version"))
  end)

  it("help check and check --help print the help of check", function()
    local r = h.run("help", "check")
    assert.are.equal(0, r.code)
    assert.are.equal("", r.stderr)
    starts("usage: steward check DIR [--config FILE] [--json]\n\n", r.stdout)
    assert.are.same(r, h.run("check", "--help"))
    assert.are.same(r, h.run("check", GOOD, "--help"))
    starts("usage: steward graph DIR [--format text|dot|mermaid] [--why] [--json]\n\n", h.run("graph", "--help").stdout)
  end)

  it("help of an unknown command is a usage error", function()
    usage_error(h.run("help", "frobnicate"), 'no help for "frobnicate": unknown command', "usage: steward help [COMMAND]\n")
  end)

  it("no command is a usage error", function()
    usage_error(h.run(), "missing command", "usage: steward COMMAND [OPTIONS] [DIR]\n")
  end)

  it("an unknown command prints the usage and exits 2", function()
    usage_error(h.run("frobnicate", GOOD), 'unknown command "frobnicate"', "usage: steward COMMAND [OPTIONS] [DIR]\n")
  end)

  it("an unknown option prints the usage and exits 2", function()
    usage_error(h.run("--frobnicate"), 'unknown option "--frobnicate"', "usage: steward COMMAND [OPTIONS] [DIR]\n")
    usage_error(h.run("check", "--frobnicate", GOOD), 'unknown option "--frobnicate"', "usage: steward check DIR [--config FILE] [--json]\n")
    usage_error(h.run("check", GOOD, "-q"), 'unknown option "-q"', "usage: steward check DIR [--config FILE] [--json]\n")
  end)

  it("takes options before and after DIR", function()
    for _, args in ipairs {
      { "check", "--config", "spec/apps/supervisor/shutdown_timeout.host.yaml", GOOD },
      { "check", GOOD, "--config", "spec/apps/supervisor/shutdown_timeout.host.yaml" },
    } do
      local r = h.run(table.unpack(args))
      assert.are.equal("", r.stderr)
      assert.are.equal(OK, r.stdout)
      assert.are.equal(0, r.code)
    end
    local before = h.run("graph", "--format", "dot", "--why", GOOD)
    assert.are.equal(0, before.code)
    assert.are.same(before, h.run("graph", GOOD, "--why", "--format", "dot"))
  end)

  it("an option without its value is a usage error", function()
    usage_error(h.run("check", GOOD, "--config"), "option --config needs a value", "usage: steward check DIR [--config FILE] [--json]\n")
    usage_error(h.run("graph", GOOD, "--format"), "option --format needs a value", "usage: steward graph DIR")
  end)

  it("check without DIR is a usage error", function()
    usage_error(h.run("check"), "check needs an app directory", "usage: steward check DIR [--config FILE] [--json]\n")
    usage_error(h.run("graph", "--why"), "graph needs an app directory", "usage: steward graph DIR")
  end)

  it("a second DIR is a usage error", function()
    usage_error(h.run("check", GOOD, GOOD), 'unexpected argument "' .. GOOD .. '"', "usage: steward check DIR [--config FILE] [--json]\n")
  end)

  it("a DIR that does not exist is an error, exit 2", function()
    local r = h.run("check", "spec/corpus/no-such-app")
    assert.are.equal(2, r.code)
    assert.are.equal("", r.stdout)
    assert.is_truthy(r.stderr:match("^spec/corpus/no%-such%-app: cannot read the app directory: [^\n]+\n1 error\n$"), r.stderr)
  end)

  it("a DIR that is a file is an error, exit 2", function()
    local r = h.run("check", "spec/corpus/good/04-namespaces/a.yaml")
    assert.are.equal(2, r.code)
    assert.are.equal("", r.stdout)
    assert.are.equal("spec/corpus/good/04-namespaces/a.yaml: not a directory\n1 error\n", r.stderr)
  end)

  it("a DIR written with a trailing slash names files without a double slash", function()
    local dir = "spec/corpus/bad/34-cycle-2"
    local r = h.run("check", dir .. "/")
    assert.are.equal(2, r.code)
    assert.are.equal(h.read(dir .. "/expected.txt"), r.stderr)
    assert.are.equal(OK, h.run("check", GOOD .. "/").stdout)
  end)

  it("graph --format svg is a usage error", function()
    usage_error(h.run("graph", GOOD, "--format", "svg"), 'unknown graph format "svg" (text, dot or mermaid)',
                "usage: steward graph DIR [--format text|dot|mermaid] [--why] [--json]\n")
  end)
  it("check --json prints one document: ok, counts and every error with its place", function()
    local r = h.run("check", GOOD, "--json")
    assert.are.equal(0, r.code)
    assert.are.equal('{"ok":true,"entries":5,"services":3,"errors":[]}\n', r.stdout)
    r = h.run("check", "--json", "spec/corpus/bad/77-lua-syntax-errors")
    assert.are.equal(2, r.code)
    assert.are.equal("", r.stderr)
    assert.truthy(r.stdout:find('"ok":false', 1, true), r.stdout)
    assert.truthy(r.stdout:find('"entry":"app:broken_file","field":"source","message":"spec/corpus/bad/77-lua-syntax-errors/src/broken.lua:2: unexpected symbol near \'=\'"', 1, true), r.stdout)
  end)

  it("check --config validates the host config too", function()
    local r = h.run("check", GOOD, "--config", "spec/corpus/bad/77-lua-syntax-errors/app.yaml")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("app.yaml:1:1: field version: unknown field", 1, true), r.stderr)
    r = h.run("check", GOOD, "--config", "spec/no-such-host.yaml")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("spec/no-such-host.yaml: cannot read the host config", 1, true), r.stderr)
  end)

  it("a mistyped command or option gets a suggestion; a directory where an id goes is named", function()
    usage_error(h.run("statsu"), 'unknown command "statsu" (did you mean "status"?)', "usage: steward COMMAND")
    usage_error(h.run("graph", GOOD, "--wyh"), 'unknown option "--wyh" (did you mean "--why"?)', "usage: steward graph")
    usage_error(h.run("stop", GOOD), '"' .. GOOD .. '" is an app directory, not a service id (steward stop ID [--json] [--control PATH] [DIR])', "usage: steward stop")
    usage_error(h.run("check", GOOD, "--log-format", "json"), "option --log-format does not apply to check", "usage: steward check")
  end)
  it("top with no host answering exits 1 like status", function()
    local r = h.run("top", GOOD)
    assert.are.equal(1, r.code)
    assert.truthy(r.stderr:find("^steward top: no host is listening on"), r.stderr)
  end)
  it("graph --json prints services with their levels and edges, and the groups", function()
    local r = h.run("graph", "examples/hello", "--json")
    assert.are.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find('{"id":"app:api","level":1,"depends_on":[{"id":"app:cache","why":"lifecycle.depends_on[0]"}', 1, true), r.stdout)
    assert.truthy(r.stdout:find('"groups":[{"id":"app:workers","strategy":"one_for_all","children":["app:worker_a","app:worker_b"]}]', 1, true), r.stdout)
  end)
end)
