-- funcs.call: values, failures, ids and copies; one line per case.
local t = require("t")

local function show(...) print(t.shown(...)) end

return function()
  show(funcs.call("multi", "a", nil))                 -- every value, nils kept
  show(funcs.call("funcs:add", 2, 40))                -- a full id
  show(funcs.call("nothing"))                         -- no values at all
  show(select("#", funcs.call("echo", nil, nil)))     -- trailing nils counted
  show(funcs.call("echo", { list = { 1, 2 }, [10] = "ten" }))
  show(funcs.call("by_method", "x"))                  -- method, as for process.lua
  show(funcs.call("fail_ret", 7))                     -- nil, err returned
  local _, e = funcs.call("fail_obj")                 -- an errors.new value keeps its fields
  show(type(e), e.message, e.kind, e.retryable, errors.is(e, "busy"))
  show(funcs.call("raise"))                           -- raised: the message, no traceback
  local _, pos = funcs.call("raise_pos")
  show(pos:match("raise_pos%.lua:2: boom here$") ~= nil, pos:find("traceback", 1, true) == nil)
  local _, obj = funcs.call("raise_obj")
  show(obj.message, obj.kind, obj.retryable)
  show(funcs.call("hungry"))                          -- the function's own limits apply
  show(funcs.call("unsendable"))                      -- results are copied as messages are
  show(funcs.call("add", 1, print))                   -- and so are arguments
  show(funcs.call("nope"))
  show(funcs.call("other:nope"))
  show(funcs.call("not_a_function"))
  show(funcs.call("t"))
  show(pcall(funcs.call))
  show(funcs.call("nested"))                          -- a function calls functions
  show(t.poll(process.events()))                      -- no call's end became an event
end
