-- funcs.call under process.with_context: the function runs as the identity.
return function()
  return security.actor():id(), security.can("delete", "orders")
end
