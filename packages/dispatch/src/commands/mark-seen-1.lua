--[[
  Marks a claimed, not yet sent task as seen by another submission of its task_id, which is about
  to be answered 200 from it: the claiming submission may then no longer give the claim back
  (release-claim-2.lua), so the task that caller was told of cannot vanish.

  KEYS[1] task: the task hash

  Output: 1 marked (or already sent on: nothing to mark), 0 no such task (the claim was given back)
]]
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if status == 'accepted' then redis.call('HSET', KEYS[1], 'seen', '1') end
return 1
