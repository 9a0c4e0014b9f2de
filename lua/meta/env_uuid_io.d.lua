---@meta steward

-- env, uuid and io (docs/lua-api.md).

-- ---------------------------------------------------------------------------------------
-- env
-- ---------------------------------------------------------------------------------------

---The environment variables env.variables entries expose (docs/registry.md).
---@class steward.envlib
env = {}

---The variable's value: the host's for a from_process name it sets, else the entry's default.
---Errors: "env.get: NAME is not exposed (no env.variables entry lists it)",
---"env.get: NAME is not set in the host environment and has no default",
---"permission denied: env.get on NAME" (checked before the lookup).
---@param name string
---@return string|nil value
---@return string? err
function env.get(name) end

-- ---------------------------------------------------------------------------------------
-- uuid
-- ---------------------------------------------------------------------------------------

---UUIDs (RFC 9562) from the OS's random source, as lowercase text.
---@class steward.uuidlib
uuid = {}

---A random UUID (version 4). nil, "uuid.v4: the OS random source cannot be read" if it fails.
---@return string|nil
---@return string? err
function uuid.v4() end

---A time-ordered UUID (version 7): Unix milliseconds first; strictly increasing across the
---host, so ids sort in the order they were made.
---@return string|nil
---@return string? err
function uuid.v7() end

-- ---------------------------------------------------------------------------------------
-- io
-- ---------------------------------------------------------------------------------------

---io.stdout or io.stderr. tostring gives "file (stdout)" / "file (stderr)".
---@class steward.IoFile
local IoFile = {}

---Writes strings and numbers as given (no separator or newline added). Line-buffered per
---process; never blocks the worker: when the stream's 1 MB buffer is full the calling task
---waits for room; after 5 s without progress the output is dropped and this returns
---nil, "io: stdout is not keeping up: output dropped after 5 s without progress".
---@param ... string|number
---@return steward.IoFile|nil
---@return string? err
function IoFile:write(...) end

---Sends the process's unfinished line now (without waiting for the reader).
---@return steward.IoFile|nil
---@return string? err
function IoFile:flush() end

---The host's stdout and stderr; no file access (docs/lua-api.md "io").
---@class steward.iolib
---@field stdout steward.IoFile
---@field stderr steward.IoFile
io = {}

---io.stdout:write(...).
---@param ... string|number
---@return steward.IoFile|nil
---@return string? err
function io.write(...) end

---io.stdout:flush().
---@return steward.IoFile|nil
---@return string? err
function io.flush() end

---"file" for io.stdout and io.stderr, else nil (what libraries such as luassert ask).
---@param x any
---@return "file"|nil
function io.type(x) end
