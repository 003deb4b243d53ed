--[[
  Marks an agent whose task loop stopped consuming: SUSPECT, and kept SUSPECT by heartbeats
  until a receipt shows it consuming again.

  KEYS[1] agent: the agent record hash

  Output: 1 when it became SUSPECT, 0 otherwise
]]
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'HEALTHY' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'SUSPECT', 'zombie', 1)
return 1
