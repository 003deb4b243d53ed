--[[
  Deletes a consumer from an inbox's group only when its pending list is empty: XGROUP
  DELCONSUMER would silently drop the entries it still holds.

  KEYS[1] inbox: the agent's inbox stream
  ARGV[1] group: the consumer group   ARGV[2] consumer: the consumer's name

  Output: 1 deleted, 0 kept (it still holds entries)
]]
local held = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #held > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
