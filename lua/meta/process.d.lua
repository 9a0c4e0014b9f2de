---@meta steward

-- The `process` module (docs/lua-api.md). Types shared by every file: steward.d.lua.

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

---Spawning and calling as an identity made at run time (process.with_context).
---@class steward.Context
local Context = {}

---process.spawn, the new process running as the context's actor under its scope (and all it
---spawns, at any depth).
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function Context:spawn(id, host, ...) end

---As Context:spawn, monitored.
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function Context:spawn_monitored(id, host, ...) end

---As Context:spawn, linked.
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function Context:spawn_linked(id, host, ...) end

---As Context:spawn, linked and monitored.
---@param id string
---@param host? string
---@param ... steward.Sendable
---@return steward.Pid|nil pid
---@return string? err
function Context:spawn_linked_monitored(id, host, ...) end

---funcs.call, the function running as the context's identity.
---@param id string
---@param ... steward.Sendable
---@return any ...
function Context:call(id, ...) end

---A context to spawn and call as `actor` under `scope` (docs/security.md "Identities at run
---time"). Checked now: the caller's context must allow security.impersonate on the actor's id
---and security.scope on each policy of the scope (on the group of a named scope). Errors:
---"permission denied: security.impersonate on user:alice", "permission denied: security.scope
---on app:orders_admin". Raises unless actor and scope are real ones (a forged table is not).
---@param ctx {actor: steward.IdActor, scope: steward.Scope}
---@return steward.Context|nil context
---@return string? err
function process.with_context(ctx) end

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
