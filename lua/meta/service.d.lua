---@meta steward

-- service (docs/lua-api.md#service): what a process of a service may know and ask of it.

---Fields of lifecycle.restart for the current run (docs/registry.md#lifecycle); those left
---out keep the entry's values.
---@class steward.RestartPolicy
---@field policy? "on_failure"|"always"|"never"
---@field initial_delay? steward.Duration
---@field max_delay? steward.Duration
---@field backoff_factor? number 1 to 1000
---@field jitter? number 0 to 1
---@field max_attempts? integer 0 (unlimited) to 1000000000

---The caller's service: from its own process, any process of its tree and its funcs calls.
---Outside a service every function returns nil, "not a service".
---@class steward.servicelib
service = {}

---The service's id, e.g. "app:api".
---@return string|nil id
---@return string? err "not a service"
function service.id() end

---A fresh copy of the service's `config` (nil when it has none); ids in it stay strings.
---@return any config
---@return string? err "not a service"
function service.config() end

---Marks a `ready: notify` service running: process.ready() in its own process, and from any
---process of its tree too. Nothing once it runs.
---@return true|nil ok
---@return string? err "not a service"
function service.ready() end

---The watchdog's ping: a service with lifecycle.watchdog must call it at least that often
---once running, from any process of its tree, or its run fails ("watchdog timeout"). Costs
---a clock read and a store; nothing is queued.
---@return true|nil ok
---@return string? err "not a service"
function service.alive() end

---Replaces fields of lifecycle.restart for the current run's end; nil gives the entry's back.
---A bad table raises `bad argument #1 to 'set_restart_policy' (FIELD: ...)`. Guarded as
---service.set_restart_policy on the service's id.
---@param t steward.RestartPolicy|nil
---@return true|nil ok
---@return string? err "not a service", "permission denied: ...", "out of memory"
function service.set_restart_policy(t) end

---The next end counts as the first: its restart waits initial_delay and max_attempts counts
---from zero. Guarded as service.reset_backoff on the service's id.
---@return true|nil ok
---@return string? err "not a service", "permission denied: ...", "out of memory"
function service.reset_backoff() end
