---@meta steward

-- The `supervisor` module (docs/lua-api.md "supervisor", docs/supervision.md "Supervisors in
-- Lua"). Types shared by every file: steward.d.lua.

---The restart settings of a supervisor's children, read as a service's lifecycle.restart.
---@class steward.SupervisorRestart
---@field policy? "on_failure"|"always"|"never" default "on_failure"
---@field initial_delay? steward.Duration default "1s"
---@field max_delay? steward.Duration default "90s"
---@field backoff_factor? number default 2 (at least 1)
---@field jitter? number default 0.1 (0 to 1)
---@field stable_threshold? steward.Duration default "5s": a run this long resets the backoff

---@class steward.SupervisorOptions
---@field strategy? "one_for_one"|"one_for_all"|"rest_for_one" default "one_for_one"
---@field intensity? number default 3: more than this many restarts within period fail it
---@field period? steward.Duration default "5s"
---@field restart? steward.SupervisorRestart
---@field decide? fun(err: any, key: string): "restart"|"stop"|"escalate" called (in this process) for each failure the policy would restart; default: "stop" for errors.new{retryable = false}, else "restart"
---@field stop_timeout? steward.Duration default "5s": CANCEL, then a kill after it (0: at once)
---@field max_children? number default 1000
---@field name? string for the logs and errors

---One child as which_children lists it.
---@class steward.SupervisorChild
---@field key string "worker#1": stays with the child across restarts
---@field id string the process.lua id as given to start_child
---@field pid steward.Pid|nil its current process, nil when it is not running
---@field state "running"|"restarting"|"stopping"|"stopped"|"failed"
---@field restarts integer

---@class steward.SupervisorCounts
---@field total integer
---@field running integer
---@field restarting integer
---@field stopping integer
---@field stopped integer
---@field failed integer

---A supervisor: a task of this process. Its methods block the calling task until done; once it
---has ended (stopped or failed) they return nil, "supervisor is not running" (stop: true).
---@class steward.Supervisor
local Supervisor = {}

---Spawns process.lua `id` (checked as process.spawn is) with the arguments, given again at
---each restart. Errors: those of process.spawn, "too many children (at most N)".
---@param id string
---@param ... steward.Sendable
---@return string|nil key
---@return string? err
function Supervisor:start_child(id, ...) end

---Stops the child (CANCEL, then a kill after stop_timeout); it stays listed as "stopped".
---@param key string
---@return true|nil ok
---@return string? err "no such child"
function Supervisor:terminate_child(key) end

---Stops the child if it runs, then starts it again at once.
---@param key string
---@return steward.Pid|nil pid
---@return string? err
function Supervisor:restart_child(key) end

---Stops the child if it runs and forgets it.
---@param key string
---@return true|nil ok
---@return string? err "no such child"
function Supervisor:delete_child(key) end

---@return steward.SupervisorChild[]|nil children in start order
---@return string? err
function Supervisor:which_children() end

---@return steward.SupervisorCounts|nil counts
---@return string? err
function Supervisor:count_children() end

---Stops every child (reverse start order) and ends the supervisor.
---@return true
function Supervisor:stop() end

---Supervisors of dynamic children.
---@class steward.supervisorlib
supervisor = {}

---Starts a supervisor as a task of this process. Past its intensity, or when decide says
---"escalate", it stops its children and fails this process as a link would: a LINK_DOWN event
---({kind = "link_down", from = own pid, supervisor = name, result = {error = reason}}) when it
---traps links, else this process fails with the reason. Bad options raise
---"bad argument #1 to 'start' (...)".
---@param opts? steward.SupervisorOptions
---@return steward.Supervisor
function supervisor.start(opts) end
