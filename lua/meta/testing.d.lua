---@meta
-- Editor stubs for the globals `steward test` gives a test.lua (docs/lua-api.md "steward test").

---A block of tests; `fn` runs at once to declare what it holds.
---@param name string
---@param fn fun()
function describe(name, fn) end
context = describe

---A test; without `fn` it is pending.
---@param name string
---@param fn? fun()
function it(name, fn) end

---A pending test: reported, not run.
---@param name string
function pending(name) end

---@param fn fun()
function before_each(fn) end
---@param fn fun()
function after_each(fn) end
---@param fn fun()
function setup(fn) end
---@param fn fun()
function teardown(fn) end

---In a test process only: stops its clock; returns the reading.
---@return number
function time.freeze() end

---In a test process only: moves the frozen clock by `d`, waking what falls due, in order.
---@param d string|number
---@return number
function time.advance(d) end

---The process's package table: loaded, preload, config; nothing is searched on disk.
---@class package
---@field loaded table<string, any>
---@field preload table<string, fun(name: string): any>
---@field config string
---@field path string
---@field cpath string
package = {}

---The value env.get(name) gives, or nil (not exposed, unset, or denied).
---@param name string
---@return string|nil
function os.getenv(name) end
