-- Retries fn with exponential backoff: delays initial, initial*factor, ... up to max.
local M = {}
function M.retry(fn, opts)
  local delay, attempts = opts.initial or 0.1, 0
  while true do
    attempts = attempts + 1
    local ok, v = pcall(fn, attempts)
    if ok then return v, attempts end
    if attempts >= (opts.attempts or 5) then return nil, attempts, v end
    time.sleep(delay)
    delay = math.min(delay * (opts.factor or 2), opts.max or 30)
  end
end
return M
