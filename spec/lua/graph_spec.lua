-- `steward graph` on spec/corpus/good/05-graph: a chain a -> b (explicit depends_on, relative),
-- b -> c (config `database: app:c`), web -> d through a registry.entry, web -> e, f through a
-- group named in its config, e and f -> c through their group's own depends_on, and a second
-- namespace whose relative references (`process: proc`, `requires: [ app:a, x ]`) resolve in it.
local h = require("spec.lua.steward_helper")

local DIR = "spec/corpus/good/05-graph"

local function graph(...)
  local r = h.run("graph", DIR, ...)
  assert.are.equal("", r.stderr)
  assert.are.equal(0, r.code)
  return r.stdout
end

local function lines(t) return table.concat(t, "\n") .. "\n" end

describe("steward graph", function()
  it("prints services by start level, each with what it depends on, then the groups", function()
    assert.are.equal(lines {
      "level 0:",
      "  app:c",
      "  app:d",
      "  app.workers:x",
      "level 1:",
      "  app:b -> app:c",
      "  app:e -> app:c",
      "  app:f -> app:c",
      "level 2:",
      "  app:a -> app:b",
      "  app:web -> app:d, app:e, app:f",
      "level 3:",
      "  app.workers:w -> app:a, app.workers:x",
      "groups:",
      "  app:pool (one_for_one): app:e, app:f",
    }, graph())
  end)

  it("is the same with --format text", function()
    assert.are.equal(graph(), graph("--format", "text"))
  end)

  it("--why names the field each edge comes from", function()
    assert.are.equal(lines {
      "level 0:",
      "  app:c",
      "  app:d",
      "  app.workers:x",
      "level 1:",
      "  app:b",
      "    -> app:c  (config.database)",
      "  app:e",
      "    -> app:c  (group app:pool lifecycle.depends_on[0])",
      "  app:f",
      "    -> app:c  (group app:pool lifecycle.depends_on[0])",
      "level 2:",
      "  app:a",
      "    -> app:b  (lifecycle.depends_on[0])",
      "  app:web",
      "    -> app:d  (config.settings via app:settings field data.cache)",
      "    -> app:e  (config.backends[0] via group app:pool)",
      "    -> app:f  (config.backends[0] via group app:pool)",
      "level 3:",
      "  app.workers:w",
      "    -> app:a  (lifecycle.requires[0])",
      "    -> app.workers:x  (lifecycle.requires[1])",
      "groups:",
      "  app:pool (one_for_one): app:e, app:f",
    }, graph("--why"))
  end)

  local nodes = {
    '  "app:a";', '  "app:b";', '  "app:c";', '  "app:d";', '  "app:web";', '  "app:e";', '  "app:f";',
    '  "app.workers:w";', '  "app.workers:x";',
  }

  local function dot(edges)
    local t = { "digraph steward {", "  rankdir=BT;", "  node [shape=box];" }
    for _, n in ipairs(nodes) do t[#t + 1] = n end
    for _, e in ipairs(edges) do t[#t + 1] = e end
    t[#t + 1] = "}"
    return lines(t)
  end

  it("--format dot draws every service and edge", function()
    assert.are.equal(dot {
      '  "app:a" -> "app:b";',
      '  "app:b" -> "app:c";',
      '  "app:web" -> "app:d";',
      '  "app:web" -> "app:e";',
      '  "app:web" -> "app:f";',
      '  "app:e" -> "app:c";',
      '  "app:f" -> "app:c";',
      '  "app.workers:w" -> "app:a";',
      '  "app.workers:w" -> "app.workers:x";',
    }, graph("--format", "dot"))
  end)

  it("--format dot --why labels the edges", function()
    assert.are.equal(dot {
      '  "app:a" -> "app:b" [label="lifecycle.depends_on[0]"];',
      '  "app:b" -> "app:c" [label="config.database"];',
      '  "app:web" -> "app:d" [label="config.settings via app:settings field data.cache"];',
      '  "app:web" -> "app:e" [label="config.backends[0] via group app:pool"];',
      '  "app:web" -> "app:f" [label="config.backends[0] via group app:pool"];',
      '  "app:e" -> "app:c" [label="group app:pool lifecycle.depends_on[0]"];',
      '  "app:f" -> "app:c" [label="group app:pool lifecycle.depends_on[0]"];',
      '  "app.workers:w" -> "app:a" [label="lifecycle.requires[0]"];',
      '  "app.workers:w" -> "app.workers:x" [label="lifecycle.requires[1]"];',
    }, graph("--why", "--format", "dot"))
  end)

  local function mermaid(edges)
    local t = {
      "flowchart BT",
      '  s0["app:a"]', '  s1["app:b"]', '  s2["app:c"]', '  s3["app:d"]', '  s4["app:web"]',
      '  s5["app:e"]', '  s6["app:f"]', '  s7["app.workers:w"]', '  s8["app.workers:x"]',
    }
    for _, e in ipairs(edges) do t[#t + 1] = e end
    return lines(t)
  end

  it("--format mermaid draws every service and edge", function()
    assert.are.equal(mermaid {
      "  s0 --> s1", "  s1 --> s2", "  s4 --> s3", "  s4 --> s5", "  s4 --> s6",
      "  s5 --> s2", "  s6 --> s2", "  s7 --> s0", "  s7 --> s8",
    }, graph("--format", "mermaid"))
  end)

  it("--format mermaid --why labels the edges", function()
    assert.are.equal(mermaid {
      '  s0 -->|"lifecycle.depends_on[0]"| s1',
      '  s1 -->|"config.database"| s2',
      '  s4 -->|"config.settings via app:settings field data.cache"| s3',
      '  s4 -->|"config.backends[0] via group app:pool"| s5',
      '  s4 -->|"config.backends[0] via group app:pool"| s6',
      '  s5 -->|"group app:pool lifecycle.depends_on[0]"| s2',
      '  s6 -->|"group app:pool lifecycle.depends_on[0]"| s2',
      '  s7 -->|"lifecycle.requires[0]"| s0',
      '  s7 -->|"lifecycle.requires[1]"| s8',
    }, graph("--format", "mermaid", "--why"))
  end)

  it("reports the errors of a malformed registry instead of a graph", function()
    local bad = "spec/corpus/bad/34-cycle-2"
    local r = h.run("graph", bad)
    assert.are.equal("", r.stdout)
    assert.are.equal(h.read(bad .. "/expected.txt"), r.stderr)
    assert.are.equal(2, r.code)
  end)
end)
