--[[
  Puts a task in its capability's waiting room (room/waiting-room.ts), in fair order: tenants
  first, then fairness keys within a tenant, each by start-time fair queuing (virtual time), then
  priority and arrival within a fairness key. Every key of the room shares the room's hash tag
  (`{room:<capability>}`): the sub-keys are KEYS[1] followed by a suffix.

  KEYS[1] room: the room's meta hash (v: virtual time, seq, n: tasks waiting, n:<tenant>,
          in:<tenant> arrivals, w:<tenant> weight, mi:<tenant> slots it may hold, f:<tenant> a
          gone tenant's finish tag, vt:<tenant> the tenant's own virtual time); `:kw` holds each
          fairness key's weight (`<tenant>:<key>`), `:capped` the tenants with a max_inflight
  ARGV[1] taskId   ARGV[2] tenant   ARGV[3] fairnessKey: '' for none
  ARGV[4] tenantWeight   ARGV[5] keyWeight   ARGV[6] priority: 0–9
  ARGV[7] now: epoch ms   ARGV[8] maxTenant: most of the tenant's tasks waiting
  ARGV[9] maxTotal: most tasks waiting in the room
  ARGV[10] maxInflight: most slots of the capability the tenant holds at once, 0 for no bound

  Output: { 0, ahead } put in, `ahead` tasks waited before it | { 1, 0 } in the room already |
          { -1, waiting } the tenant's bound is reached | { -2, waiting } the room's bound is reached
]]
local R = KEYS[1]
local taskId, tenant, fkey = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HEXISTS', R .. ':x', taskId) == 1 then return { 1, 0 } end
local total = tonumber(redis.call('HGET', R, 'n') or '0')
local mine = tonumber(redis.call('HGET', R, 'n:' .. tenant) or '0')
if mine >= tonumber(ARGV[8]) then return { -1, mine } end
if total >= tonumber(ARGV[9]) then return { -2, total } end
local seq = redis.call('HINCRBY', R, 'seq', 1)
-- Within a fairness key: highest priority first, then arrival.
local score = (9 - tonumber(ARGV[6])) * 4294967296 + seq
local q = R .. ':q:' .. tenant .. ':' .. fkey
redis.call('ZADD', q, score, taskId)
local ks = R .. ':k:' .. tenant
if not redis.call('ZSCORE', ks, fkey) then
  redis.call('ZADD', ks, tonumber(redis.call('HGET', R, 'vt:' .. tenant) or '0'), fkey)
end
redis.call('HSET', R .. ':kw', tenant .. ':' .. fkey, ARGV[5])
redis.call('HSET', R, 'w:' .. tenant, ARGV[4], 'mi:' .. tenant, ARGV[10])
if tonumber(ARGV[10]) > 0 then redis.call('SADD', R .. ':capped', tenant)
else redis.call('SREM', R .. ':capped', tenant) end
if not redis.call('ZSCORE', R .. ':t', tenant) then
  local v = tonumber(redis.call('HGET', R, 'v') or '0')
  local f = tonumber(redis.call('HGET', R, 'f:' .. tenant) or '0')
  redis.call('ZADD', R .. ':t', math.max(v, f), tenant)
end
redis.call('ZADD', R .. ':e:' .. tenant, ARGV[7], taskId)
redis.call('HSET', R .. ':x', taskId,
  tenant .. '\t' .. fkey .. '\t' .. score .. '\t' .. ARGV[7] .. '\t' .. total .. '\t' .. ARGV[5])
redis.call('HINCRBY', R, 'n', 1)
redis.call('HINCRBY', R, 'n:' .. tenant, 1)
redis.call('HINCRBY', R, 'in:' .. tenant, 1)
return { 0, total }
