--[[
  Ends a task's stay in a waiting room once the task taken from it (room-pop-1.lua) was sent:
  its wait joins the room's recent waits (the last 1,000, which the stats read) and its tenant's
  count of tasks sent.

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1] taskId   ARGV[2] now: epoch ms

  Output: the task's wait in ms, or -1 when it was not being taken
]]
local R = KEYS[1]
local taskId = ARGV[1]
local x = redis.call('HGET', R .. ':x', taskId)
if redis.call('ZREM', R .. ':taking', taskId) == 0 or not x then return -1 end
redis.call('HDEL', R .. ':x', taskId)
local tenant, enq = string.match(x, '^([^\t]*)\t[^\t]*\t[^\t]*\t([^\t]*)')
local wait = math.max(0, tonumber(ARGV[2]) - (tonumber(enq) or tonumber(ARGV[2])))
redis.call('LPUSH', R .. ':recent', tenant .. '\t' .. wait)
redis.call('LTRIM', R .. ':recent', 0, 999)
redis.call('HINCRBY', R, 'out:' .. tenant, 1)
return wait
