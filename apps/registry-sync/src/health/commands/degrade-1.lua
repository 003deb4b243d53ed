--[[
  Turns a HEALTHY agent DEGRADED (failing or timing out too often): it keeps heartbeating and
  taking probes, and gets tasks only when no HEALTHY agent has room, at least until `until`.

  KEYS[1] agent: the agent record hash
  ARGV[1] until: the cooldown's end (epoch ms)

  Output: 1 when it became DEGRADED, 0 otherwise (gone, or not HEALTHY any more)
]]
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'HEALTHY' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'DEGRADED', 'degraded', 1, 'degraded_until', ARGV[1])
return 1
