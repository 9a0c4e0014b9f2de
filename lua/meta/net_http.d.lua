---@meta steward

-- net, http, and require (docs/lua-api.md).

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
