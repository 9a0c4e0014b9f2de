local function deeper() error("secret detail in the handler") end
return function(req) deeper() end
