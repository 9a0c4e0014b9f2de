---@meta steward

-- HTTP server handlers: the request an http.endpoint's function.lua gets and the response it
-- returns (docs/lua-api.md "HTTP server"). A handler is `fun(req: steward.HttpRequest):
-- steward.HttpResponse|nil, any?`, run in a fresh process per request.

---A request, as a handler gets it.
---@class steward.HttpRequest
---@field method string "GET", "POST", ...
---@field path string The path, percent-decoded, without the query: "/v1/items/42".
---@field params table<string, string> The path's parameters: {id = "42"} for "/items/{id}".
---@field query table<string, string> The query's pairs, decoded ('+' is a space); a repeated key keeps the last.
---@field headers table<string, string> Names in lower case; a repeated header's values joined with ", ".
---@field body string The body ("" when none).
---@field remote string The client: "tcp://127.0.0.1:41234".
local HttpRequest = {}

---The body decoded as JSON.
---@return any|nil value
---@return string? err
function HttpRequest:json() end

---What a handler returns. `nil, err` instead is a 500 (the error is logged, never sent).
---@class steward.HttpResponse
---@field status? integer 100-999; default 200.
---@field headers? table<string, string|number> content-length, connection and transfer-encoding are the server's (a handler's are left out).
---@field body? string|table A string as is (text/plain unless a content-type is given), or a table sent as JSON (application/json).

---An http.endpoint's function.
---@alias steward.HttpHandler fun(req: steward.HttpRequest): steward.HttpResponse|nil, any?
