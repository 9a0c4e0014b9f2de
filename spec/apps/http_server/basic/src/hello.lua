return function(req)
  return { status = 200, body = { hello = req.params.name, q = req.query, m = req.method } }
end
