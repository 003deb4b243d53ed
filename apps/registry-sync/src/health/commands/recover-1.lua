--[[
  Brings a DEGRADED agent back to HEALTHY after its cooldown and passed probes, with a fresh
  health window (its old failures would turn it DEGRADED again at once).

  KEYS[1] agent: the agent record hash

  Output: 1 when it recovered, 0 otherwise (gone, or not degraded)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'degraded')
if not cur[1] or not cur[2] then return 0 end
redis.call('HDEL', KEYS[1], 'degraded', 'degraded_until')
redis.call('HSET', KEYS[1], 'outcomes', '')
if cur[1] == 'DEGRADED' then redis.call('HSET', KEYS[1], 'status', 'HEALTHY') end
return 1
