--[[
  Gives a claimed task_id back when no agent could take the task, so the caller's 503 leaves
  nothing behind. Only the submission that claimed it (same nonce) can, and only before delivery.
  A claim another submission of the same task_id was answered 200 from (`seen`, mark-seen-1.lua)
  is kept: that caller was told the task exists. It stays `accepted` with its watchdog entry, and
  registry-sync sends it when the entry comes due.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  ARGV[1] nonce: the claiming submission's

  Output: 1 released, 0 not ours or already delivered, 2 kept (seen by another submission)
]]
local cur = redis.call('HMGET', KEYS[1], 'nonce', 'status', 'seen')
if cur[1] ~= ARGV[1] or cur[2] ~= 'accepted' then return 0 end
if cur[3] then return 2 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
