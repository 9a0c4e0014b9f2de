-- A process of a service's tree: its line carries the service's id.
return function(name)
  logger.info("child line", { of = name })
  return 0
end
