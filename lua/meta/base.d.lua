---@meta steward

-- The base library, as the sandbox allows it (docs/lua-api.md, docs/sandbox-builtins.md).

-- ---------------------------------------------------------------------------------------
-- Base library (the sandbox's allow-list)
-- ---------------------------------------------------------------------------------------

---The process's globals. Its metatable is protected: getmetatable(_G) is false and
---setmetatable(_G, t) raises.
---@class _G
_G = {}

---"Lua 5.1".
---@type string
_VERSION = "Lua 5.1"

---Raises message (default "assertion failed!") when v is false or nil; else returns all its
---arguments.
---@generic T
---@param v T
---@param message? any
---@param ... any
---@return T
---@return any ...
function assert(v, message, ...) end

---Raises an error with any value (a string gets position information at level, default 1).
---A table, e.g. an errors.new value, is kept as it is.
---@param message any
---@param level? integer
function error(message, level) end

---The metatable of object, or its __metatable field: false for strings, _G, host module
---tables, errors and security actors; "message", "channel", "ticker" for those objects.
---@param object any
---@return any metatable
function getmetatable(object) end

---Iterates t[1], t[2], ... up to the first nil.
---@generic T: table, V
---@param t T
---@return fun(t: V[], i?: integer): integer, V
---@return T
---@return integer
function ipairs(t) end

---The next key and value of table after index (nil: the first).
---@generic K, V
---@param table table<K, V>
---@param index? K
---@return K?
---@return V?
function next(table, index) end

---Iterates every key and value of t.
---@generic T: table, K, V
---@param t T
---@return fun(t: table<K, V>, index?: K): K, V
---@return T
---@return nil
function pairs(t) end

---Calls f in protected mode. A kill or a memory-limit failure cannot be caught: it is raised
---again at the next instruction.
---@param f function
---@param ... any
---@return boolean success
---@return any ... results, or the error value
function pcall(f, ...) end

---Writes the arguments (through tostring, tab-separated) as one line on stdout, in a single
---write.
---@param ... any
function print(...) end

---Equality without metamethods.
---@param v1 any
---@param v2 any
---@return boolean
function rawequal(v1, v2) end

---table[index] without metamethods.
---@param table table
---@param index any
---@return any
function rawget(table, index) end

---table[index] = value without metamethods.
---@generic T: table
---@param table T
---@param index any
---@param value any
---@return T
function rawset(table, index, value) end

---The arguments after index n (a negative n counts from the end), or their count for "#".
---@param n integer|"#"
---@param ... any
---@return any ...
function select(n, ...) end

---Sets the metatable of table (nil removes it); raises when the current one is protected.
---@generic T: table
---@param table T
---@param metatable? table
---@return T
function setmetatable(table, metatable) end

---Converts e to a number in the given base (2 to 36, default 10); nil when it cannot.
---@param e any
---@param base? integer
---@return number?
function tonumber(e, base) end

---Converts v to a string (through __tostring when present).
---@param v any
---@return string
function tostring(v) end

---The type name of v.
---@param v any
---@return steward.TypeName
function type(v) end

---Returns list[i], ..., list[j] (defaults 1 and #list).
---@param list table
---@param i? integer
---@param j? integer
---@return any ...
function unpack(list, i, j) end

---Calls f(...) in protected mode with msgh as the error handler (the handler does not run
---once the process is being killed).
---@param f function
---@param msgh function
---@param ... any
---@return boolean success
---@return any ... results, or what msgh returned
function xpcall(f, msgh, ...) end

---Compiles Lua source text into a function; never a binary chunk, whatever mode says
---("attempt to load a binary chunk (binary chunks are not allowed)"). chunk is a string or a
---reader function returning pieces until nil or "". env, if a table, becomes the function's
---environment (default: the process's globals).
---@param chunk string|fun(): string?
---@param chunkname? string
---@param mode? string ignored: text only
---@param env? table
---@return function|nil fn
---@return string? err
function load(chunk, chunkname, mode, env) end

---The same function as load: text only, with the same optional arguments.
---@param chunk string|fun(): string?
---@param chunkname? string
---@param mode? string ignored: text only
---@param env? table
---@return function|nil fn
---@return string? err
function loadstring(chunk, chunkname, mode, env) end

---Only collectgarbage("count") is allowed: the Lua heap in KB. Any other option (also the
---default, "collect") raises "collectgarbage('<opt>') is not allowed (only 'count')".
---@param opt "count"
---@return number kilobytes
function collectgarbage(opt) end
