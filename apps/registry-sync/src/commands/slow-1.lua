--[[
  Records an agent's execution time for a capability: an EWMA that routers use to penalise an
  agent slower than its peers, and the count of consecutive slow completions (outlier
  detection); a fast completion resets the count.

  KEYS[1] agent: the agent record hash
  ARGV[1] durationMs: duration ms   ARGV[2] slowMs: slow threshold ms   ARGV[3] capability
  ARGV[4] ewmaWeight: EWMA weight of the new sample

  Output: the streak after this completion (0 when the agent is gone)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local field = 'ewma:' .. ARGV[3]
local prev = tonumber(redis.call('HGET', KEYS[1], field))
local d = tonumber(ARGV[1])
local alpha = tonumber(ARGV[4])
local next = d
if prev then next = alpha * d + (1 - alpha) * prev end
redis.call('HSET', KEYS[1], field, string.format('%.1f', next))
if d > tonumber(ARGV[2]) then
  return redis.call('HINCRBY', KEYS[1], 'slow_streak', 1)
end
redis.call('HSET', KEYS[1], 'slow_streak', 0)
return 0
