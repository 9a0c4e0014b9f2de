---@meta steward

-- steward.d.lua: the Lua API a Steward process sees, as lua-language-server (LuaLS)
-- annotations. It is never loaded by the host: editors read it to complete and type-check
-- process code. Everything here exists in the host's C code (host/lua_api/*.c,
-- host/runtime/channel.c, host/vm/vm.c); nothing else is reachable from a process.
--
-- Use: add the directory holding this file to `workspace.library`, and since processes run
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
--     "workspace": { "library": ["/path/to/steward/lua"] }
--   }
--
-- (Leaving the builtins on also works: then LuaLS offers what the sandbox removes too.)
--
-- A process.lua chunk returns a function, or a table whose `main` (or the entry's `method`)
-- is called: with the command-line arguments as strings (`steward run DIR -x ID ARGS...`),
-- the service's `input` list, or the values given to process.spawn. A returned number is the
-- exit code; `return nil, err` (a string or an errors.new value) is a failure, as is a raised
-- error. When main returns, the process ends, whatever tasks are still running.
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
---@alias steward.Sendable nil|boolean|number|string|table

---The kinds of registry entries.
---@alias steward.Kind
---| "process.lua"
---| "library.lua"
---| "process.host"
---| "process.service"
---| "service.group"
---| "security.policy"
---| "registry.entry"

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

-- ---------------------------------------------------------------------------------------
-- process
-- ---------------------------------------------------------------------------------------

---Identity, spawning, messages, events, monitors, links and names.
---@class steward.processlib
process = {}

---This process's pid.
---@return steward.Pid
function process.pid() end

---Starts a process.lua entry as a new process with the given arguments (copied, see
---steward.Sendable) passed to its main. An id without a colon is in the caller's namespace.
---host names a process.host entry (relative ids qualified the same way); nil or absent: the
---caller's worker. In a guarded service, checks action "process.spawn" on the qualified id
---before looking it up.
---Errors: "permission denied: process.spawn on <id>", "no process.lua <id>", "<id> is not a
---process.lua", "no process.host <host>", an argument copy error, or a load/compile error.
---@param id string a process.lua entry id ("app:worker" or "worker")
---@param host? string a process.host entry id
---@param ... steward.Sendable arguments of the child's main
---@return steward.Pid|nil pid
---@return string? err
function process.spawn(id, host, ...) end

---As process.spawn, and monitors the child: an EXIT event arrives on process.events() when
---it ends.
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function process.spawn_monitored(id, host, ...) end

---As process.spawn, and links the child: if either fails (error or kill), the other is
---killed with "linked process <pid> failed: ...", unless it traps links (set_options).
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function process.spawn_linked(id, host, ...) end

---As process.spawn, both linked and monitored.
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function process.spawn_linked_monitored(id, host, ...) end

---Sends a message: the values after the topic are copied into dest's inbox (in send order
---per sender). In a guarded service, checks action "process.send" on dest as given.
---Errors: "permission denied: process.send on <dest>", "no such process" (unknown or dead
---destination), a copy error ("cannot send a function value (at ...)", "cannot send a table
---with a cycle", "message too large: over N bytes" ...), "out of memory".
---@param dest steward.ProcessRef
---@param topic string
---@param ... steward.Sendable
---@return true|nil ok
---@return string? err
function process.send(dest, topic, ...) end

---The process's inbox: the same unbounded channel on every call; messages arrive on it as
---steward.Message objects.
---@return steward.Inbox
function process.inbox() end

---The process's events channel: the same unbounded channel on every call; EXIT, LINK_DOWN
---and CANCEL events arrive on it as steward.Event tables.
---@return steward.EventChannel
function process.events() end

---Asks a process to stop: it gets a CANCEL event with this reason (copied) on its events
---channel; what it does with it is up to its code. Not guarded.
---Errors: "no such process", or a copy error for the reason.
---@param pid steward.ProcessRef
---@param reason? steward.Sendable
---@return true|nil ok
---@return string? err
function process.cancel(pid, reason) end

---Kills a process (it ends with the error "killed"; monitors get EXIT, links LINK_DOWN).
---Not guarded.
---@param pid steward.ProcessRef
---@return true|nil ok
---@return string? err "no such process"
function process.terminate(pid) end

---Monitors a process: one EXIT event arrives when it ends. For a process already gone, an
---EXIT with result.error = "no such process" is queued at once. Always returns true.
---@param pid steward.ProcessRef
---@return true
function process.monitor(pid) end

---Stops monitoring pid: no EXIT from it arrives afterwards (queued ones are removed).
---Always returns true.
---@param pid steward.ProcessRef
---@return true
function process.unmonitor(pid) end

---Links this process with pid (both ways): a failure of either kills the other with
---"linked process <pid> failed: <error>", unless it set trap_links, in which case it gets a
---LINK_DOWN event instead. A normal exit kills nobody.
---@param pid steward.ProcessRef
---@return true|nil ok
---@return string? err "no such process" | "cannot link to itself"
function process.link(pid) end

---Removes a link with pid (both ways). Always returns true.
---@param pid steward.ProcessRef
---@return true
function process.unlink(pid) end

---Options of this process (keys other than these are ignored).
---@class steward.ProcessOptions
---true: a linked process's failure becomes a LINK_DOWN event instead of killing this one.
---@field trap_links? boolean

---Sets options of this process. Always returns true.
---@param options steward.ProcessOptions
---@return true
function process.set_options(options) end

---Tells the supervisor that this service is ready (`lifecycle.ready: notify`); only the first
---call counts, and it does nothing for other processes. Always returns true.
---@return true
function process.ready() end

---Names for processes (a name lasts until its process ends).
process.registry = {}

---Registers name for pid (default: this process).
---Errors: "names may not look like pids" (a name starting with "host|"), "no such process",
---"name already registered" (to a live process).
---@param name string
---@param pid? steward.ProcessRef
---@return true|nil ok
---@return string? err
function process.registry.register(name, pid) end

---The pid registered under name (names only, not pids).
---@param name string
---@return steward.Pid|nil pid
---@return string? err "no process registered under that name"
function process.registry.lookup(name) end

---Removes a name, whichever process holds it.
---@param name string
---@return true|nil ok
---@return string? err "no process registered under that name"
function process.registry.unregister(name) end

---The kinds of events on process.events() (the `kind` field of a steward.Event).
process.event = {
    ---A monitored process ended.
    EXIT = "exit",
    ---A linked process failed (delivered only with trap_links).
    LINK_DOWN = "link_down",
    ---process.cancel was called on this process (or the supervisor is stopping it).
    CANCEL = "cancel",
}

-- ---------------------------------------------------------------------------------------
-- time
-- ---------------------------------------------------------------------------------------

---A repeating timer made by time.ticker. getmetatable(t) is "ticker".
---@class steward.Ticker
local Ticker = {}

---The ticker's channel (capacity 1): receives time.now() at each tick; a tick is dropped
---while the previous one has not been taken.
---@return steward.TimerChannel
function Ticker:channel() end

---Stops the ticker (idempotent); no tick is offered after it.
function Ticker:stop() end

---Monotonic time and timers. A timer never fires early.
---@class steward.timelib
time = {}

---Monotonic time in seconds (not the wall clock).
---@return number seconds
function time.now() end

---Blocks the calling task for d (other tasks keep running).
---@param d steward.Duration
function time.sleep(d) end

---A channel (capacity 1) that receives time.now() once, after d; it is never closed.
---@param d steward.Duration
---@return steward.TimerChannel
function time.after(d) end

---A ticker firing every d. Raises "a ticker needs a period above zero" for d = 0.
---@param d steward.Duration
---@return steward.Ticker
function time.ticker(d) end

-- ---------------------------------------------------------------------------------------
-- logger
-- ---------------------------------------------------------------------------------------

---Structured fields of a log line: string keys only (others are skipped), sorted by key.
---Strings, numbers and booleans as they are; tables as compact JSON (cycles "<cycle>", past
---16 levels "<too deep>", over 60 KB "<too large>"); functions, threads and userdata as
---"<function>"-style placeholders; json.null as null. A `pid` field is replaced by the
---process's pid.
---@alias steward.LogFields table<string, any>

---Lines in the host log, each with the process's service id and, last, its pid. Also
---callable with a colon: logger:info(msg, fields). A level below the host's log level writes
---nothing (arguments are still checked, fields not read).
---@class steward.loggerlib
logger = {}

---Logs msg at debug level.
---@param msg string|number
---@param fields? steward.LogFields
---@overload fun(self: steward.loggerlib, msg: string|number, fields?: steward.LogFields)
function logger.debug(msg, fields) end

---Logs msg at info level.
---@param msg string|number
---@param fields? steward.LogFields
---@overload fun(self: steward.loggerlib, msg: string|number, fields?: steward.LogFields)
function logger.info(msg, fields) end

---Logs msg at warn level.
---@param msg string|number
---@param fields? steward.LogFields
---@overload fun(self: steward.loggerlib, msg: string|number, fields?: steward.LogFields)
function logger.warn(msg, fields) end

---Logs msg at error level.
---@param msg string|number
---@param fields? steward.LogFields
---@overload fun(self: steward.loggerlib, msg: string|number, fields?: steward.LogFields)
function logger.error(msg, fields) end

-- ---------------------------------------------------------------------------------------
-- errors
-- ---------------------------------------------------------------------------------------

---A structured error: a plain table (read with rawget by the host, so a copy sent in a
---message keeps its meaning) whose protected metatable only adds __tostring: "kind: message",
---or the message alone when kind is "error". Raise it with error(e) or return nil, e; a
---failure with retryable = false is final for its service (no restart).
---@class steward.Error
---@field message string
---Default "error".
---@field kind string
---Default true; only an explicit false makes a service's failure final.
---@field retryable boolean
---Anything, copied with the error.
---@field details? any

---The fields errors.new accepts (any other key raises "unknown field '<key>' (expected
---message, kind, retryable or details)").
---@class steward.ErrorSpec
---Required; a number becomes a string.
---@field message string|number
---@field kind? string
---@field retryable? boolean
---@field details? any

---Structured error values.
---@class steward.errorslib
errors = {}

---A new error value. From a string or number: that message, kind "error", retryable true.
---Raises "bad argument #1 to 'new' (field 'message' must be a string)" and the like.
---@param spec steward.ErrorSpec|string|number
---@return steward.Error
function errors.new(spec) end

---Whether v is an error value (a table with string `kind` and `message` fields, so copies
---received in messages count too), and of that kind when kind is given.
---@param v any
---@param kind? string
---@return boolean
function errors.is(v, kind) end

-- ---------------------------------------------------------------------------------------
-- json
-- ---------------------------------------------------------------------------------------

---JSON over lua-cjson. Neither function raises on bad input (only on running out of memory).
---@class steward.jsonlib
json = {}

---A value that encodes as JSON null (a light userdata: it cannot be sent in a message).
---@type lightuserdata
json.null = nil

---Encodes v as JSON: an empty table is {}, sparse arrays become objects, numbers keep 14
---significant digits, "/" is written "\/", NaN/inf and nesting past 100 levels are errors,
---strings are not checked for UTF-8.
---@param v any
---@return string|nil text
---@return string? err
function json.encode(v) end

---Decodes JSON text. null decodes to nil (an object key with null is absent; in a list it
---leaves a hole), so json.decode("null") is nil with no error. NaN/inf/hex numbers and
---nesting past 100 levels are refused. The result can always be sent in a message.
---Errors: "json.decode: expected a string, got <type>", or cjson's message.
---@param text string
---@return any value
---@return string? err
function json.decode(text) end

-- ---------------------------------------------------------------------------------------
-- registry
-- ---------------------------------------------------------------------------------------

---A registry entry: a new deep copy on every call. YAML null becomes nil (a key with null is
---absent), integers and floats are numbers, mapping keys are strings, lists start at 1.
---@class steward.Entry
---"namespace:name".
---@field id string
---@field name string
---@field namespace string
---@field kind steward.Kind
---The merged meta (file meta under the entry's own); {} when none.
---@field meta table<string, any>
---Every other field of the entry's YAML mapping, as written (no defaults).
---@field data table<string, any>

---registry.find criteria (all must match): `kind`, `namespace`, `name` (exact strings), and
---`["meta.<a.b.c>"]` keys: the merged meta value at that path equals the given string,
---number or boolean (no coercion).
---@class steward.FindCriteria
---@field kind? steward.Kind
---@field namespace? string
---@field name? string
---@field [string] string|number|boolean

---Read-only views of the registry snapshot the process started with.
---@class steward.registrylib
registry = {}

---The entry with this id (exactly as given: no namespace is added). In a guarded service,
---checks action "registry.read" on id before the lookup.
---@param id string
---@return steward.Entry|nil entry
---@return string? err "no entry <id>" | "permission denied: registry.read on <id>"
function registry.get(id) end

---Every entry matching all criteria, in load order ({} when none). Entries the process may
---not read (registry.read) are left out. Raises on an unknown criterion ("unknown criterion
---'<key>' (expected kind, namespace, name or meta.<path>)"), an unknown kind ("unknown kind
---'<kind>'") or a value of the wrong type.
---@param criteria steward.FindCriteria
---@return steward.Entry[]
function registry.find(criteria) end

-- ---------------------------------------------------------------------------------------
-- security
-- ---------------------------------------------------------------------------------------

---The security actor of this process's service (security.actor()). Its methods read the
---current policy set: after a reload that drops the actor they return nil.
---@class steward.Actor
local Actor = {}

---The actor's id, e.g. "user:bob".
---@return string? id
function Actor:id() end

---A fresh copy of the actor's meta ({} when it has none): changing it changes nothing.
---@return table<string, any>? meta
function Actor:meta() end

---Policy checks with the process's service context (read-only; children inherit it).
---Without an actor, strict mode (the default) gives false / "deny", and
---`security: { strict_mode: false }` gives true / "allow".
---@class steward.securitylib
security = {}

---Whether action on resource is allowed: "undefined" counts as false. action and resource
---must be strings without NUL bytes (no coercion); meta, read in place, is the resource's
---fields that policy conditions test (`meta.<field>`).
---@param action string
---@param resource string
---@param meta? table
---@return boolean
function security.can(action, resource, meta) end

---The decision for action on resource: any applying deny wins, else any applying allow,
---else "undefined". Arguments as security.can.
---@param action string
---@param resource string
---@param meta? table
---@return steward.Decision
function security.check(action, resource, meta) end

---The actor of this process's service, or nil when it has none.
---@return steward.Actor?
function security.actor() end

-- ---------------------------------------------------------------------------------------
-- funcs
-- ---------------------------------------------------------------------------------------

---What funcs.async's channel receives once, when the function ends.
---@class steward.CallResult
---Every value the function returned, copied; n counts them (trailing nils included). Empty
---(n = 0) on failure.
---@field values {n: integer, [integer]: any}
---nil on success; else the err of a returned `nil, err` (an errors.new value stays a table),
---the message of a raised error without the host's traceback, "memory limit exceeded" or
---"killed".
---@field error? string|steward.Error|table

---Calls function.lua entries, each call in a fresh process of its own with the caller's
---service and security context (guarded as action "funcs.call" on the qualified id, checked
---before the lookup). Arguments and results are copied as messages are. The caller owns its
---calls: when it ends, the functions it still runs are killed. No timeout: a function that
---never returns is bounded only by its own limits.
---@class steward.funcslib
funcs = {}

---Runs function.lua `id` (relative ids are in the caller's namespace) with the arguments and
---blocks the calling task until it ends. Returns everything the function returned, or nil,
---err: "no function.lua app:x", "permission denied: funcs.call on app:x", "cannot send a
---function value (at payload#2)", or the function's failure (see steward.CallResult.error).
---@param id string
---@param ... steward.Sendable
---@return any ...
function funcs.call(id, ...) end

---Runs function.lua `id` as funcs.call does without blocking: returns a channel (capacity 1)
---that receives one steward.CallResult when the function ends, or nil, err when the call
---cannot start (the same errors as funcs.call).
---@param id string
---@param ... steward.Sendable
---@return steward.Channel|nil channel
---@return string? err
function funcs.async(id, ...) end

-- ---------------------------------------------------------------------------------------
-- net
-- ---------------------------------------------------------------------------------------

---A socket address: "tcp://HOST:PORT" (HOST a numeric IPv4 address, "[IPv6]" such as
---"[::1]", or "localhost"; PORT 0-65535, 0 for any free port when listening) or
---"unix://PATH" ("unix:///run/app.sock"; "unix://app.sock" is relative). A malformed one makes
---the call return `nil, 'bad address "<addr>": <why>'`.
---@alias steward.NetAddr string

---Why a net call failed: "closed" (the peer closed, or the object is closed, collected or
---belongs to another process), "timeout", "line too long", "busy: another task is
---reading|writing", "too many sockets (at most 1024 per process)",
---"permission denied: net.listen|net.connect on <resource>", or the system's text
---("connection refused", "address already in use", "connection reset by peer" ...).
---@alias steward.NetError string

---A listening socket (net.listen). getmetatable(l) is "net.listener"; tostring(l) is
---"net.listener: 0x...". It cannot be sent to another process; collected, it closes.
---@class steward.Listener
local Listener = {}

---The next connection, blocking the calling task until one comes (they wait in the kernel's
---backlog until accepted).
---@param timeout? steward.Duration
---@return steward.Conn|nil conn
---@return steward.NetError? err
function Listener:accept(timeout) end

---The address it listens on, with the real port: "tcp://127.0.0.1:43121".
---@return steward.NetAddr|nil addr
---@return steward.NetError? err "closed"
function Listener:addr() end

---Closes it (idempotent): a task waiting in accept gets nil, "closed"; a unix listener
---removes its socket file.
---@return true
function Listener:close() end

---A connected stream socket (net.connect, Listener:accept). One task may read and one write it
---at a time. Bytes read from the kernel wait in a 64 KB buffer (when it is full the connection
---stops reading, so the sender's writes wait); writes queue at most 64 KB before a write
---waits. getmetatable(c) is "net.conn"; it cannot be sent; collected, it closes.
---@class steward.Conn
local Conn = {}

---Up to n bytes (at least 1), as soon as there are any. Bytes that came before the peer
---closed are returned first, then nil, "closed".
---@param n integer at least 1
---@param timeout? steward.Duration
---@return string|nil data
---@return steward.NetError? err
function Conn:read(n, timeout) end

---The next line without its "\n" (a "\r\n" goes too); at the end, the last line even
---without a "\n". A line must fit in 64 KB: else nil, "line too long" (the bytes stay unread).
---@param timeout? steward.Duration
---@return string|nil line
---@return steward.NetError? err
function Conn:read_line(timeout) end

---Exactly n bytes. Up to 64 KB they wait in the connection's buffer (a timeout takes none);
---beyond, the pieces gather in the process's heap (its memory limit applies) and a timeout or
---end loses what was gathered.
---@param n integer at least 1
---@param timeout? steward.Duration
---@return string|nil data
---@return steward.NetError? err
function Conn:read_exact(n, timeout) end

---Writes s: true once the bytes are with the kernel or queued within 64 KB; past that it
---waits for the queue to drain (after a timeout the bytes stay queued and are still sent).
---@param s string
---@param timeout? steward.Duration
---@return true|nil ok
---@return steward.NetError? err
function Conn:write(s, timeout) end

---Sends what write queued, then closes (idempotent). Tasks waiting on the connection get
---nil, "closed" at once. Where no task can wait (a sort comparator...) it closes at once.
---@param timeout? steward.Duration how long to wait for the queue; then it closes anyway
---@return true|nil ok
---@return steward.NetError? err "timeout": queued bytes were dropped
function Conn:close(timeout) end

---The peer's address: "tcp://127.0.0.1:5000", "unix:///run/app.sock" ("unix://" for an unnamed
---unix client).
---@return steward.NetAddr|nil addr
---@return steward.NetError? err
function Conn:peer() end

---This end's address.
---@return steward.NetAddr|nil addr
---@return steward.NetError? err
function Conn:local_addr() end

---TCP and unix-domain stream sockets. Each call that waits blocks only its task and raises
---"cannot block here: ..." where no task can wait; sockets live on the loop of the worker
---running the process, which then stays on that worker. A process's sockets close when it
---ends, however it ends (unsent queued bytes are dropped: close() first to send them). Both
---functions are guarded (actions net.listen / net.connect on "tcp:HOST:PORT" as written, or
---"unix:PATH"), checked before anything happens.
---@class steward.netlib
net = {}

---Listens on addr (backlog 511; TCP sets SO_REUSEADDR). A unix socket file nobody listens on
---(left by a killed host) is replaced; any other file at the path is "address already in use".
---@param addr steward.NetAddr
---@return steward.Listener|nil listener
---@return steward.NetError? err
function net.listen(addr) end

---Connects to addr, blocking the calling task until connected. TCP connections set TCP_NODELAY.
---@param addr steward.NetAddr
---@param opts? {timeout?: steward.Duration}
---@return steward.Conn|nil conn
---@return steward.NetError? err
function net.connect(addr, opts) end

-- ---------------------------------------------------------------------------------------
-- http
-- ---------------------------------------------------------------------------------------

---A request for http.request; http.get and http.post take the same options but url, method
---(and for post, body) come from their arguments.
---@class steward.HttpRequest
---@field url string http:// or https:// (anything else: nil, 'bad url "...": expected http:// or https://')
---@field method? string an HTTP method token (default "GET"); "HEAD" reads no body
---@field headers? table<string, string|number> request headers; values may not hold CR, LF or NUL
---@field body? string sent as is (Content-Length set); no "Expect: 100-continue" unless given
---@field timeout? steward.Duration the whole transfer (default "30s"); past it: nil, "timeout"
---@field max_body? integer response body bytes (default 16 MB); past it: nil, "response too large"
---@field follow_redirects? boolean follow 3xx Location (at most 5, http/https only; default false)

---@class steward.HttpResponse
---@field status integer the status code (a 404 or 500 is a response, not an error)
---@field headers table<string, string> the final response's headers, names lower-cased; a repeated header's values joined with ", "
---@field body string

---Why a request failed: "timeout", "response too large", "response headers too large",
---"too many requests (at most 64 per process)", "bad url ...", "permission denied:
---http.request on <url>", or libcurl's text ("Couldn't connect to server", "Couldn't resolve
---host name", "Unsupported protocol", ...).
---@alias steward.HttpError string

---An HTTP client (libcurl on the worker's loop). Each request blocks only its task and raises
---"cannot block here: ..." where no task can wait; at most 64 are in flight per process, and
---its process stays on its worker while any is. A request is removed when its task or process
---ends, however it ends. Guarded as action http.request on the URL as given, checked before
---anything happens (redirects followed with follow_redirects are not checked again).
---@class steward.httplib
http = {}

---@param req steward.HttpRequest
---@return steward.HttpResponse|nil response
---@return steward.HttpError? err
function http.request(req) end

---@param url string
---@param opts? steward.HttpRequest options (url and method ignored)
---@return steward.HttpResponse|nil response
---@return steward.HttpError? err
function http.get(url, opts) end

---@param url string
---@param body? string
---@param opts? steward.HttpRequest options (url, method and body ignored)
---@return steward.HttpResponse|nil response
---@return steward.HttpError? err
function http.post(url, body, opts) end

-- ---------------------------------------------------------------------------------------
-- require
-- ---------------------------------------------------------------------------------------

---Returns a host module (the global of that name: process, channel, time, logger, errors,
---json, registry, security, net, http, coroutine, string, table, math, bit) or one of the entry's
---`imports` (a library.lua entry, run once per process; a library returning nothing loads as
---true). Raises "module '<name>' not found: no such host module or import", or
---"require: <error>" when a library fails to load.
---@param name string
---@return any
---@overload fun(name: "process"): steward.processlib
---@overload fun(name: "channel"): steward.channellib
---@overload fun(name: "time"): steward.timelib
---@overload fun(name: "logger"): steward.loggerlib
---@overload fun(name: "errors"): steward.errorslib
---@overload fun(name: "json"): steward.jsonlib
---@overload fun(name: "registry"): steward.registrylib
---@overload fun(name: "security"): steward.securitylib
---@overload fun(name: "net"): steward.netlib
---@overload fun(name: "http"): steward.httplib
---@overload fun(name: "coroutine"): coroutinelib
---@overload fun(name: "string"): stringlib
---@overload fun(name: "table"): tablelib
---@overload fun(name: "math"): mathlib
---@overload fun(name: "bit"): bitlib
function require(name) end

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

-- ---------------------------------------------------------------------------------------
-- string (no dump; getmetatable("") is false; patterns have a work budget)
-- ---------------------------------------------------------------------------------------

---String functions, also available as methods on strings (("x"):upper()).
---find, match, gmatch and gsub use Lua 5.1 patterns with the same results as LuaJIT's, but
---raise "pattern too complex" past a work budget (1M steps + 64 per subject byte); a plain
---find is linear.
---@class stringlib
string = {}

---The byte codes of s[i..j] (defaults i = 1, j = i).
---@param s string|number
---@param i? integer
---@param j? integer
---@return integer ...
function string.byte(s, i, j) end

---A string of the given byte codes.
---@param ... integer
---@return string
function string.char(...) end

---Finds pattern in s from init (default 1); plain = true searches a plain substring.
---@param s string|number
---@param pattern string|number
---@param init? integer
---@param plain? boolean
---@return integer|nil start
---@return integer|nil end
---@return any ... captures
function string.find(s, pattern, init, plain) end

---Formats the arguments as printf does (%q quotes a string for Lua).
---@param fmt string|number
---@param ... any
---@return string
function string.format(fmt, ...) end

---An iterator over the matches of pattern in s (the captures, or the whole match).
---@param s string|number
---@param pattern string|number
---@return fun(): string?, ...
function string.gmatch(s, pattern) end

---Replaces matches of pattern (at most n) with repl: a string (%0-%9), a table or a function
---of the captures.
---@param s string|number
---@param pattern string|number
---@param repl string|number|table|function
---@param n? integer
---@return string
---@return integer count
function string.gsub(s, pattern, repl, n) end

---The length of s in bytes.
---@param s string|number
---@return integer
function string.len(s) end

---s in lowercase.
---@param s string|number
---@return string
function string.lower(s) end

---The captures of the first match of pattern in s from init, or nil.
---@param s string|number
---@param pattern string|number
---@param init? integer
---@return any ...
function string.match(s, pattern, init) end

---s repeated n times, with sep between copies.
---@param s string|number
---@param n integer
---@param sep? string|number
---@return string
function string.rep(s, n, sep) end

---s reversed.
---@param s string|number
---@return string
function string.reverse(s) end

---The substring s[i..j] (negative indexes count from the end).
---@param s string|number
---@param i integer
---@param j? integer
---@return string
function string.sub(s, i, j) end

---s in uppercase.
---@param s string|number
---@return string
function string.upper(s) end

-- ---------------------------------------------------------------------------------------
-- table
-- ---------------------------------------------------------------------------------------

---@class tablelib
table = {}

---list[i] .. sep .. ... .. list[j] (defaults "", 1, #list).
---@param list table
---@param sep? string|number
---@param i? integer
---@param j? integer
---@return string
function table.concat(list, sep, i, j) end

---Calls f(k, v) for every pair of t until f returns non-nil, and returns that (deprecated).
---@param t table
---@param f fun(k: any, v: any): any
---@return any
function table.foreach(t, f) end

---Calls f(i, v) for i = 1 .. #t until f returns non-nil, and returns that (deprecated).
---@param t table
---@param f fun(i: integer, v: any): any
---@return any
function table.foreachi(t, f) end

---#t (deprecated).
---@param t table
---@return integer
function table.getn(t) end

---Inserts value at pos (default: the end), shifting the rest up.
---@overload fun(list: table, value: any)
---@param list table
---@param pos integer
---@param value any
function table.insert(list, pos, value) end

---The largest positive numeric key of t (0 when none).
---@param t table
---@return number
function table.maxn(t) end

---Moves a1[f..e] to a2[t..] (a2 defaults to a1) and returns a2.
---@param a1 table
---@param f integer
---@param e integer
---@param t integer
---@param a2? table
---@return table a2
function table.move(a1, f, e, t, a2) end

---Removes list[pos] (default: the last) and returns it, shifting the rest down.
---@param list table
---@param pos? integer
---@return any
function table.remove(list, pos) end

---Sorts list in place with comp (default <). The comparator cannot block or yield.
---@generic T
---@param list T[]
---@param comp? fun(a: T, b: T): boolean
function table.sort(list, comp) end

-- ---------------------------------------------------------------------------------------
-- math
-- ---------------------------------------------------------------------------------------

---@class mathlib
---@field pi number
---@field huge number
math = {}

---@param x number
---@return number
function math.abs(x) end

---@param x number
---@return number
function math.acos(x) end

---@param x number
---@return number
function math.asin(x) end

---@param x number
---@return number
function math.atan(x) end

---@param y number
---@param x number
---@return number
function math.atan2(y, x) end

---@param x number
---@return integer
function math.ceil(x) end

---@param x number
---@return number
function math.cos(x) end

---@param x number
---@return number
function math.cosh(x) end

---Radians to degrees.
---@param x number
---@return number
function math.deg(x) end

---@param x number
---@return number
function math.exp(x) end

---@param x number
---@return integer
function math.floor(x) end

---The remainder of x / y, rounded towards zero.
---@param x number
---@param y number
---@return number
function math.fmod(x, y) end

---m and e such that x = m * 2^e.
---@param x number
---@return number m
---@return integer e
function math.frexp(x) end

---m * 2^e.
---@param m number
---@param e integer
---@return number
function math.ldexp(m, e) end

---The logarithm of x in base (default e).
---@param x number
---@param base? number
---@return number
function math.log(x, base) end

---@param x number
---@return number
function math.log10(x) end

---@param x number
---@param ... number
---@return number
function math.max(x, ...) end

---@param x number
---@param ... number
---@return number
function math.min(x, ...) end

---The integral and fractional parts of x.
---@param x number
---@return number
---@return number
function math.modf(x) end

---x ^ y.
---@param x number
---@param y number
---@return number
function math.pow(x, y) end

---Degrees to radians.
---@param x number
---@return number
function math.rad(x) end

---A pseudo-random number: in [0, 1) without arguments, in [1, m] with m, in [m, n] with both.
---@overload fun(): number
---@overload fun(m: integer): integer
---@param m integer
---@param n integer
---@return integer
function math.random(m, n) end

---Seeds math.random.
---@param x number
function math.randomseed(x) end

---@param x number
---@return number
function math.sin(x) end

---@param x number
---@return number
function math.sinh(x) end

---@param x number
---@return number
function math.sqrt(x) end

---@param x number
---@return number
function math.tan(x) end

---@param x number
---@return number
function math.tanh(x) end

-- ---------------------------------------------------------------------------------------
-- bit (LuaJIT's BitOp: 32-bit operations)
-- ---------------------------------------------------------------------------------------

---@class bitlib
bit = {}

---x normalized to a signed 32-bit number.
---@param x number
---@return integer
function bit.tobit(x) end

---x as n hex digits (default 8; negative n: uppercase).
---@param x number
---@param n? integer
---@return string
function bit.tohex(x, n) end

---@param x number
---@return integer
function bit.bnot(x) end

---@param x number
---@param ... number
---@return integer
function bit.band(x, ...) end

---@param x number
---@param ... number
---@return integer
function bit.bor(x, ...) end

---@param x number
---@param ... number
---@return integer
function bit.bxor(x, ...) end

---@param x number
---@param n integer
---@return integer
function bit.lshift(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.rshift(x, n) end

---Arithmetic right shift.
---@param x number
---@param n integer
---@return integer
function bit.arshift(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.rol(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.ror(x, n) end

---Swaps the bytes of x.
---@param x number
---@return integer
function bit.bswap(x) end

-- ---------------------------------------------------------------------------------------
-- coroutine (plus spawn)
-- ---------------------------------------------------------------------------------------

---User coroutines, plus coroutine.spawn for tasks. Preemption and blocking host calls pass
---through user coroutines unnoticed (a blocked call inside one blocks its task).
---@class coroutinelib
coroutine = {}

---Starts fn(...) as a new task of this process, run concurrently with the others (blocking
---calls block only their own task). An uncaught error in any task fails the process; tasks
---still running when main returns end with the process.
---@param fn function
---@param ... any
---@return true
function coroutine.spawn(fn, ...) end

---A new coroutine running f.
---@param f function
---@return thread
function coroutine.create(f) end

---Whether the running coroutine can yield.
---@return boolean
function coroutine.isyieldable() end

---Starts or continues co. Resumes nest at most 200 deep (deeper: false, "C stack overflow").
---@param co thread
---@param ... any
---@return boolean success
---@return any ... values yielded or returned, or the error
function coroutine.resume(co, ...) end

---The running coroutine, or nil in a root coroutine (the main function or a task): process
---code never holds a coroutine the scheduler resumes.
---@return thread?
function coroutine.running() end

---"running", "suspended", "normal" or "dead".
---@param co thread
---@return "running"|"suspended"|"normal"|"dead"
function coroutine.status(co) end

---A function that resumes a new coroutine running f on each call and raises its errors.
---@param f function
---@return fun(...): ...
function coroutine.wrap(f) end

---Suspends the running coroutine, handing values to its resume.
---@param ... any
---@return any ... the values passed to the next resume
function coroutine.yield(...) end
