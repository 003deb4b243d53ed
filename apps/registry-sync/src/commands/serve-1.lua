--[[
  Switches an agent out of observation mode: from now on it gets caller traffic.

  KEYS[1] agent record hash

  Output: 1 switched (or already serving), 0 no such agent
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'observe', 0)
return 1
