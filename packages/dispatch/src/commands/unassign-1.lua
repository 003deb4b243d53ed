--[[
  Gives an assignment back when no candidate took the task, so it waits for the next pass.

  KEYS[1] task: the task hash
  ARGV[1] nonce: the sender's   ARGV[2] status: what it waits as again (`retry_wait`, `queued`)

  Output: 1 when given back, 0 when not ours
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'nonce')
if cur[1] ~= 'accepted' or cur[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
return 1
