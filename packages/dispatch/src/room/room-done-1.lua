--[[
  Ends the stays in a waiting room of tasks taken from it (room-pop-1.lua) once they were sent:
  every task of one room whose send ended in one tick, in one call. Each wait joins the room's
  recent waits (the last 1,000, which the stats read) and its tenant's count of tasks sent.

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1..] tasks, per task: taskId, now (epoch ms, when it was sent)

  Output: per task, its wait in ms, or -1 when it was not being taken
]]
local R = KEYS[1]
local out = {}
local recent = {}
local sent = {}
for i = 1, #ARGV, 2 do
  local taskId = ARGV[i]
  local now = tonumber(ARGV[i + 1])
  local x = redis.call('HGET', R .. ':x', taskId)
  if redis.call('ZREM', R .. ':taking', taskId) == 0 or not x then
    out[#out + 1] = -1
  else
    redis.call('HDEL', R .. ':x', taskId)
    local tenant, enq = string.match(x, '^([^\t]*)\t[^\t]*\t[^\t]*\t([^\t]*)')
    local wait = math.max(0, now - (tonumber(enq) or now))
    recent[#recent + 1] = tenant .. '\t' .. wait
    sent[tenant] = (sent[tenant] or 0) + 1
    out[#out + 1] = wait
  end
end
if #recent > 0 then
  redis.call('LPUSH', R .. ':recent', unpack(recent))
  redis.call('LTRIM', R .. ':recent', 0, 999)
end
for tenant, n in pairs(sent) do redis.call('HINCRBY', R, 'out:' .. tenant, n) end
return out
