-- a function defined here requires later, when the process calls it: still in this tree
return { later = function() return require("my.sub").prefix end, name = (...) }
