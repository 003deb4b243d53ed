--[[
  Takes a task out of a waiting room wherever it is in it: waiting (its deadline passed, it was
  cancelled), being taken, or set aside.

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1] taskId

  Output: 1 it was waiting, 2 it was being taken or set aside, 0 it was not in the room
]]
local R = KEYS[1]
local taskId = ARGV[1]
local x = redis.call('HGET', R .. ':x', taskId)
if not x then return 0 end
redis.call('HDEL', R .. ':x', taskId)
local tenant, fkey = string.match(x, '^([^\t]*)\t([^\t]*)')
redis.call('ZREM', R .. ':run:' .. tenant, taskId)
if redis.call('ZREM', R .. ':taking', taskId) + redis.call('ZREM', R .. ':held', taskId) > 0 then
  return 2
end
local q = R .. ':q:' .. tenant .. ':' .. fkey
if redis.call('ZREM', q, taskId) == 0 then return 0 end
redis.call('ZREM', R .. ':e:' .. tenant, taskId)
local ks = R .. ':k:' .. tenant
if redis.call('EXISTS', q) == 0 then
  redis.call('ZREM', ks, fkey)
  redis.call('HDEL', R .. ':kw', tenant .. ':' .. fkey)
end
if redis.call('EXISTS', ks) == 0 and redis.call('ZSCORE', R .. ':t', tenant) then
  local ttag = tonumber(redis.call('ZSCORE', R .. ':t', tenant))
  redis.call('ZREM', R .. ':t', tenant)
  redis.call('HSET', R, 'f:' .. tenant, ttag)
  redis.call('HDEL', R, 'vt:' .. tenant)
end
redis.call('HINCRBY', R, 'n', -1)
if redis.call('HINCRBY', R, 'n:' .. tenant, -1) <= 0 then redis.call('HDEL', R, 'n:' .. tenant) end
return 1
