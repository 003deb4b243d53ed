--[[
  Gives a claimed task_id back when no agent could take the task, so the caller's 503 leaves
  nothing behind. Only the submission that claimed it (same nonce) can, and only before delivery.

  KEYS[1] task hash   KEYS[2] task timeline list
  ARGV[1] nonce

  Output: 1 released, 0 not ours or already delivered
]]
local cur = redis.call('HMGET', KEYS[1], 'nonce', 'status')
if cur[1] ~= ARGV[1] or cur[2] ~= 'accepted' then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
