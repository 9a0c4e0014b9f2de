return {
  shout = function(s) return string.upper(s) .. "!" end,
}
