-- Squares its number and returns it: the result travels in the EXIT event to its monitor.
return function(n) return n * n end
