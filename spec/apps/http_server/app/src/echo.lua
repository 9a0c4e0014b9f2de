-- Echoes what the handler saw of the request, as JSON.
return function(req)
  local decoded, err
  if req.method == "POST" then decoded, err = req:json() end
  return {
    status = req.method == "PUT" and 201 or 200,
    headers = { ["x-method"] = req.method },
    body = {
      method = req.method, path = req.path, params = req.params, query = req.query,
      headers = { test = req.headers["x-test"], multi = req.headers["x-multi"],
                  host = req.headers.host },
      body = req.body, json = decoded, json_err = err,
      remote = req.remote:match("^tcp://127%.0%.0%.1:%d+$") ~= nil,
    },
  }
end
