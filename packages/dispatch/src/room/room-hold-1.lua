--[[
  Sets a task taken from a waiting room aside until a time: no agent can take it now (none serves
  its tags, region or tenant, or those that do are full), so the tasks after it go first. Its
  time over, a drainer gives it back to its place (room-return-1.lua, from `held`).

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1] taskId   ARGV[2] until: epoch ms

  Output: 1 set aside, 0 not being taken
]]
local R = KEYS[1]
if redis.call('ZREM', R .. ':taking', ARGV[1]) == 0 then return 0 end
local x = redis.call('HGET', R .. ':x', ARGV[1])
if x then redis.call('ZREM', R .. ':run:' .. string.match(x, '^([^\t]*)'), ARGV[1]) end
redis.call('ZADD', R .. ':held', ARGV[2], ARGV[1])
return 1
