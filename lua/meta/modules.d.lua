---@meta steward

-- time, logger, errors, json, registry, security, funcs (docs/lua-api.md).

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

---The wall clock (CLOCK_REALTIME): Unix seconds with the fraction. It may jump when the
---system clock is set: measure durations with time.now().
---@return number seconds
function time.unix() end

---t (Unix seconds, years 1 to 9999) as text in UTC. fmt: "rfc3339" (default:
---2026-11-24T06:10:43.5Z, microseconds when there are any) or the directives %Y %y %m %d %e
---%j %H %I %p %M %S %f %a %A %b %B %F %T %s %z %Z %% (docs/lua-api.md). Raises on a time
---out of range or a bad format.
---@param t number
---@param fmt? string
---@return string
function time.format(t, fmt) end

---Reads s as fmt says (default "rfc3339": offsets applied, fraction kept) into Unix seconds.
---Directives: %Y %m %d %H %M %S %f %b %z %F %T %%. Text that does not match:
---nil, 'time.parse: cannot parse "<s>" as <fmt>: <why> at byte N'. Raises on a bad format.
---@param s string
---@param fmt? string
---@return number|nil seconds
---@return string? err
function time.parse(s, fmt) end

---A duration as seconds: "1m30s" -> 90, "250ms" -> 0.25, "2" -> 2. Else
---nil, 'time.parse_duration: invalid duration "<s>" (...)'.
---@param s string
---@return number|nil seconds
---@return string? err
function time.parse_duration(s) end

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
---@param as? {actor?: steward.IdActor, scope?: steward.Scope} evaluate as this actor (else the caller's) under this scope (else the caller's policies)
---@return boolean
function security.can(action, resource, meta, as) end

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

---An actor made at run time (security.new_actor, ts:validate, or received in a message).
---@class steward.IdActor
local IdActor = {}

---The actor's id.
---@return string
function IdActor:id() end

---A fresh copy of the actor's meta ({} without one).
---@return table<string, any>
function IdActor:meta() end

---A set of policies made at run time (security.new_scope, named_scope, ts:validate).
---@class steward.Scope
local Scope = {}

---The decision for actor doing action on resource under these policies (strict: the actor is
---there). A scope naming a policy a reload removed gives "deny".
---@param actor steward.IdActor
---@param action string
---@param resource string
---@param meta? table
---@return steward.Decision
function Scope:evaluate(actor, action, resource, meta) end

---The scope's policy ids.
---@return string[]
function Scope:policies() end

---A host-wide store of tokens for identities (a security.token_store entry).
---@class steward.TokenStore
local TokenStore = {}

---A new opaque token (32 characters, 192 random bits) for actor and scope, living the store's
---ttl or opts.ttl. Errors: "permission denied: security.token.create on app:tokens", "token
---store full".
---@param actor steward.IdActor
---@param scope steward.Scope
---@param opts? {ttl?: string|number}
---@return string|nil token
---@return string? err
function TokenStore:create(actor, scope, opts) end

---The actor and scope of a live token; nil, "invalid token" for an unknown, expired, revoked
---or malformed one; nil, "permission denied: security.token.validate on app:tokens".
---@param token string
---@return steward.IdActor|nil actor
---@return steward.Scope|string scope_or_err
function TokenStore:validate(token) end

---Makes a token invalid now: true if it was live, else false (or nil, "permission denied:
---security.token.revoke on app:tokens").
---@param token string
---@return boolean|nil revoked
---@return string? err
function TokenStore:revoke(token) end

---An actor made at run time. Needs security.impersonate on id: else nil, "permission denied:
---security.impersonate on <id>". meta: strings, numbers, booleans and tables of them.
---@param id string
---@param meta? table
---@return steward.IdActor|nil actor
---@return string? err
function security.new_actor(id, meta) end

---A scope of these policy ids (relative ids in the caller's namespace). Needs security.scope on
---each: else nil, "permission denied: security.scope on <id>"; nil, "unknown policy <id>".
---@param ids string[]
---@return steward.Scope|nil scope
---@return string? err
function security.new_scope(ids) end

---A scope of every policy in the group. Needs security.scope on the group id: else nil,
---"permission denied: ..."; nil, "no policy joins group <id>".
---@param group string
---@return steward.Scope|nil scope
---@return string? err
function security.named_scope(group) end

---The store of a security.token_store entry, or nil, "no security.token_store <id>".
---@param id string
---@return steward.TokenStore|nil store
---@return string? err
function security.token_store(id) end

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
