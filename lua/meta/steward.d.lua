---@meta steward

-- lua/meta/*.d.lua: the Lua API a Steward process sees, as lua-language-server (LuaLS)
-- annotations, one file per area (this one: the types the others share). Never loaded by the
-- host: editors read them to complete and type-check process code. Everything here exists in the host's C code (host/lua_api/*.c,
-- host/runtime/channel.c, host/vm/vm.c); nothing else is reachable from a process.
--
-- Use: add this directory (lua/meta) to `workspace.library`, and since processes run
-- LuaJIT 2.1 (Lua 5.1 semantics) in a sandbox, turn off LuaLS's own standard library, which
-- this file replaces with the sandbox's subset (no io, os, debug, jit, ffi, package, dofile,
-- loadfile, getfenv, setfenv, newproxy, string.dump ...). A .luarc.json at the app's root:
--
--   {
--     "runtime": {
--       "version": "LuaJIT",
--       "builtin": {
--         "basic": "disable", "string": "disable", "table": "disable", "math": "disable",
--         "bit": "disable", "coroutine": "disable", "io": "disable", "os": "disable",
--         "debug": "disable", "jit": "disable", "ffi": "disable", "package": "disable",
--         "utf8": "disable", "bit32": "disable", "table.new": "disable",
--         "table.clear": "disable", "string.buffer": "disable"
--       }
--     },
--     "workspace": { "library": ["/path/to/steward/lua/meta"] }
--   }
--
-- (Leaving the builtins on also works: then LuaLS offers what the sandbox removes too.)
--
-- A process.lua chunk returns a function, or a table whose `main` (or the entry's `method`)
-- is called: with the command-line arguments as strings (`steward run DIR -x ID ARGS...`),
-- the service's `input` list, or the values given to process.spawn. Returning nothing, a
-- value, `true` or `0` is a success; `return nil, err` or `return false, err` (a string or an
-- errors.new value), a raised error, or a non-zero number ("exited with code N", the exit code
-- of `-x`) is a failure. When main returns, the process ends, whatever tasks are still
-- running; the processes it spawned get CANCEL when its service's run (or `-x`) ends.
--
-- Conventions: a function documented as returning `T|nil` plus `err` returns `nil, message`
-- on failure and never raises for that case; wrong argument types raise "bad argument".
-- Host module tables are read-only: assigning a field raises "attempt to modify a read-only
-- host module (field '<name>')".

-- ---------------------------------------------------------------------------------------
-- Shared types
-- ---------------------------------------------------------------------------------------

---A process id, formatted as "host|0x0001" (lowercase hex, at least 4 digits).
---@alias steward.Pid string

---A pid ("host|0x0001") or a name registered with process.registry.register.
---@alias steward.ProcessRef string

---A duration: "250ms", "1.5s", "2m", "1h" (units ms, s, m, h; a bare number string is
---seconds; no spaces, no sign) or a non-negative number of seconds. Anything else raises
---`bad argument #1 to '<fn>' (expected a duration ("250ms", "1.5s", "2m" or seconds))`.
---@alias steward.Duration string|number

---A value that can cross processes (messages, spawn arguments, cancel reasons, exit results):
---nil, booleans, numbers, strings and tables of those (string, number or boolean keys). It is
---copied: metatables are dropped, a table reached twice is copied twice. A cycle, a function,
---userdata (json.null too), a thread, nesting past 100 levels or a payload over the host's
---limit (64 MB) makes the sending call return `nil, err`.
---@alias steward.Sendable nil|boolean|number|string|table|steward.IdActor|steward.Scope

---The kinds of registry entries.
---@alias steward.Kind
---| "process.lua"
---| "library.lua"
---| "process.host"
---| "process.service"
---| "service.group"
---| "security.policy"
---| "registry.entry"
---| "function.lua"
---| "security.token_store"

---The `kind` of an event on process.events(): the values of process.event.
---@alias steward.EventKind
---| "exit"      # process.event.EXIT: a monitored process ended
---| "link_down" # process.event.LINK_DOWN: a linked process failed (with trap_links)
---| "cancel"    # process.event.CANCEL: someone asked this process to stop

---A security decision.
---@alias steward.Decision "allow"|"deny"|"undefined"

---What `type` returns.
---@alias steward.TypeName "nil"|"number"|"string"|"boolean"|"table"|"function"|"thread"|"userdata"

-- ---------------------------------------------------------------------------------------
-- Messages and events
-- ---------------------------------------------------------------------------------------

---A message taken from process.inbox(). Its payload stays encoded until data() decodes it
---(each call decodes a fresh copy). getmetatable(msg) is "message".
---@class steward.Message
local Message = {}

---The topic given to process.send.
---@return string topic
function Message:topic() end

---The sender's pid.
---@return steward.Pid from
function Message:from() end

---The payload: the message itself, so `msg:payload():data()` equals `msg:data()`.
---@return steward.Message payload
function Message:payload() end

---Decodes and returns every value sent after the topic (a new copy on each call). Raises
---"corrupt message" if the payload cannot be decoded.
---@return any ...
function Message:data() end

---The result of a process that ended, as carried by EXIT and LINK_DOWN events.
---@class steward.ExitResult
---The first value main returned (absent on failure, or when it cannot be copied).
---@field value? any
---On failure: the error text (with its traceback for a raised error; "killed" for a kill;
---"no such process" for a monitor of a process already gone), or a copy of the raised or
---returned error table (e.g. an errors.new value, without its metatable). nil on success.
---@field error? string|steward.Error|table

---An event taken from process.events().
---@class steward.Event
---process.event.EXIT ("exit"), LINK_DOWN ("link_down") or CANCEL ("cancel").
---@field kind steward.EventKind
---The pid of the process the event is about (EXIT, LINK_DOWN) or that cancelled this one
---(CANCEL; "host|0x0000" when the supervisor cancels at shutdown or stop).
---@field from steward.Pid
---EXIT and LINK_DOWN: how the process ended (absent if its result could not be encoded).
---@field result? steward.ExitResult
---CANCEL: the reason given to process.cancel (nil when none was given).
---@field reason? any

-- ---------------------------------------------------------------------------------------
-- Channels
-- ---------------------------------------------------------------------------------------

---A process-local channel (channel.new, process.inbox, process.events, time.after,
---ticker:channel). Values are not copied. Blocking calls block only the calling task; they
---raise "cannot block here: inside a C call (sort comparator, gsub callback, error handler)
---or outside a task" where a task cannot be suspended. getmetatable(ch) is "channel";
---tostring(ch) is "channel: 0x...".
---@class steward.Channel
local Channel = {}

---Sends v: hands it to a waiting receiver, buffers it if there is room, else blocks until a
---receiver takes it or the channel is closed. v is required (an explicit nil is sent).
---@param v any
---@return boolean ok true once sent; false if the channel is (or gets) closed
---@return string? err "channel closed"
function Channel:send(v) end

---Receives the next value, blocking until one comes. Buffered values are still delivered
---after close; once closed and empty, returns nil, false.
---@return any value
---@return boolean ok false once the channel is closed and empty
function Channel:receive() end

---Closes the channel (idempotent): waiting receivers get nil, false; waiting senders get
---false, "channel closed"; later sends fail the same way.
function Channel:close() end

---A receive case for channel.select: `{ch, "recv"}`.
---@return steward.SelectCase
function Channel:case_receive() end

---A send case for channel.select: `{ch, "send", v}`. v is required.
---@param v any
---@return steward.SelectCase
function Channel:case_send(v) end

---The process's inbox (process.inbox()): an unbounded channel of messages.
---@class steward.Inbox: steward.Channel
local Inbox = {}

---Receives the next message, blocking until one arrives.
---@return steward.Message? msg
---@return boolean ok
function Inbox:receive() end

---The process's events channel (process.events()): unbounded, of event tables.
---@class steward.EventChannel: steward.Channel
local EventChannel = {}

---Receives the next event, blocking until one arrives.
---@return steward.Event? event
---@return boolean ok
function EventChannel:receive() end

---A timer's channel (time.after, ticker:channel()): capacity 1; each firing offers
---time.now() at that moment (dropped if the previous one was not taken yet).
---@class steward.TimerChannel: steward.Channel
local TimerChannel = {}

---Receives the time (time.now() seconds) of the next firing, blocking until it comes.
---@return number? at
---@return boolean ok
function TimerChannel:receive() end

---A select case, made by ch:case_receive() or ch:case_send(v).
---@class steward.SelectCase
---@field [1] steward.Channel
---@field [2] "recv"|"send"
---@field [3] any the value to send (send cases)

---The argument of channel.select: cases in list order, and `default = true` to never block.
---@class steward.SelectSpec
---@field [integer] steward.SelectCase
---When truthy and no case is ready, select returns `{default = true}` at once.
---@field default? boolean

---What channel.select returns.
---@class steward.SelectResult
---The channel of the case that fired (absent for the default).
---@field channel? steward.Channel
---Receive cases: the value received (absent when the channel was closed, and for sends).
---@field value? any
---true if the case completed; false if its channel was closed.
---@field ok? boolean
---true when no case was ready and the spec had `default = true`.
---@field default? true

---@class steward.channellib
channel = {}

---A new channel. capacity 0 (default) is unbuffered: a send waits for a receiver.
---Raises "capacity must be a whole number >= 0" otherwise.
---@param capacity? integer
---@return steward.Channel
function channel.new(capacity) end

---Waits on several cases: returns the first ready case in list order; if none is ready,
---returns `{default = true}` when the spec has a truthy `default`, else blocks until one
---fires. A case on a closed channel fires with ok = false. Raises "select with no cases and
---no default would block forever", or "bad argument #1 to 'select' (case N is not a
---channel case)" / "(case N has no channel)".
---@param spec steward.SelectSpec
---@return steward.SelectResult
function channel.select(spec) end
