--[[
  Counts an agent's consecutive slow completions (outlier detection); a fast one resets it.

  KEYS[1] agent record hash
  ARGV[1] duration ms   ARGV[2] slow threshold ms

  Output: the streak after this completion (0 when the agent is gone)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(ARGV[1]) > tonumber(ARGV[2]) then
  return redis.call('HINCRBY', KEYS[1], 'slow_streak', 1)
end
redis.call('HSET', KEYS[1], 'slow_streak', 0)
return 0
