--[[
  Ejects a slow agent for a while (outlier detection): it gets no tasks until the time passes.

  KEYS[1] agent: the agent record hash
  ARGV[1] until: ejected until (epoch ms)

  Output: 1 ejected, 0 the agent is gone
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'ejected_until', ARGV[1], 'slow_streak', 0)
return 1
