-- Squares its number and returns it in a table: the table travels in the EXIT event to its
-- monitor. (A bare number would be an exit code: any but 0 is a failure, docs/supervision.md.)
return function(n) return { square = n * n } end
