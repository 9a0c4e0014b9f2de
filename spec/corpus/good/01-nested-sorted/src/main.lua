return function() return 0 end
