-- Uses its own import (fmt); the process's imports are not visible here.
local fmt = require("fmt")
local ok_outer = pcall(require, "cfgs")
return {
  greet = function(name) return fmt.shout("hello " .. name) end,
  sees_outer_import = ok_outer,
}
