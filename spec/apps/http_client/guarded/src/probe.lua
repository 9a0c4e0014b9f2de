local function result(r, err)
  if r then return "status " .. r.status end
  return tostring(err)
end

return function()
  logger.info("probe", {
    allowed = result(http.get("http://127.0.0.1:1/allowed/x")),
    denied = result(http.get("http://127.0.0.1:1/secret")),
    denied_by_policy = result(http.post("http://127.0.0.1:1/allowed/secret", "x")),
    other_host = result(http.request { url = "http://10.255.255.1:1/allowed/x", timeout = "1s" }),
  })
end
