--[[
  Gives a task taken from a waiting room (room-pop-1.lua) back to its place: its send found no
  free slot after all, the process that took it stopped (a sweep), or it was set aside until no
  agent could take it (room-hold-1.lua) and that time is over. Its fairness key and tenant get
  back the turn its take used, so the task is not passed over for having been taken.

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1] taskId   ARGV[2] from: `taking` or `held`

  Output: 1 given back, 0 not there (sent, gone, or given back already)
]]
local R = KEYS[1]
local taskId = ARGV[1]
local from = R .. ':' .. ARGV[2]
if not redis.call('ZSCORE', from, taskId) then return 0 end
local x = redis.call('HGET', R .. ':x', taskId)
redis.call('ZREM', from, taskId)
if not x then return 0 end
local f = {}
for part in string.gmatch(x .. '\t', '([^\t]*)\t') do f[#f + 1] = part end
local tenant, fkey = f[1], f[2]
local ttag, ktag = tonumber(f[7] or '0'), tonumber(f[8] or '0')
redis.call('ZADD', R .. ':q:' .. tenant .. ':' .. fkey, tonumber(f[3]), taskId)
-- A tag still in its set moves back by the step this take moved it, and no further: moving it
-- back to the task's own tag would also undo the later takes of the tenant (or key) that were
-- sent, a free turn for each, and the tenants taken most often (the heaviest) would gain most.
local function back(set, member, tag, step)
  if redis.call('ZSCORE', set, member) then redis.call('ZINCRBY', set, -step, member)
  else redis.call('ZADD', set, tag, member) end
end
local ks = R .. ':k:' .. tenant
redis.call('HSETNX', R .. ':kw', tenant .. ':' .. fkey, f[6] or '1')
back(ks, fkey, ktag, 1 / tonumber(redis.call('HGET', R .. ':kw', tenant .. ':' .. fkey)))
redis.call('ZREM', R .. ':run:' .. tenant, taskId)
back(R .. ':t', tenant, ttag, 1 / tonumber(redis.call('HGET', R, 'w:' .. tenant) or '1'))
redis.call('ZADD', R .. ':e:' .. tenant, tonumber(f[4]), taskId)
redis.call('HSET', R .. ':x', taskId, table.concat(f, '\t', 1, 6))
redis.call('HINCRBY', R, 'n', 1)
redis.call('HINCRBY', R, 'n:' .. tenant, 1)
return 1
