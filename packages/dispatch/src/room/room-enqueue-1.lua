--[[
  Puts tasks in their capability's waiting room (room/waiting-room.ts), in fair order: tenants
  first, then fairness keys within a tenant, each by start-time fair queuing (virtual time), then
  priority and arrival within a fairness key. Every task of one room that a process puts in during
  one tick, in one call, each put in as if it came alone, in the call's order. Every key of the
  room shares the room's hash tag (`{room:<capability>}`): the sub-keys are KEYS[1] followed by a
  suffix.

  KEYS[1] room: the room's meta hash (v: virtual time, seq, n: tasks waiting, n:<tenant>,
          in:<tenant> arrivals, w:<tenant> weight, mi:<tenant> slots it may hold, f:<tenant> a
          gone tenant's finish tag, vt:<tenant> the tenant's own virtual time); `:kw` holds each
          fairness key's weight (`<tenant>:<key>`), `:capped` the tenants with a max_inflight
  ARGV[1..] tasks, per task: taskId, tenant, fairnessKey ('' for none), tenantWeight,
          keyWeight, priority (0–9), now (epoch ms), maxTenant (most of the tenant's tasks
          waiting), maxTotal (most tasks waiting in the room), maxInflight (most slots of the
          capability the tenant holds at once, 0 for no bound)

  Output: per task two slots: 0, ahead: put in, `ahead` tasks waited before it | 1, 0 in the room
          already | -1, waiting: the tenant's bound is reached | -2, waiting: the room's bound is
          reached

  What no later task of the call reads before it is written (the counts, the sequence, the
  weights, the queues' entries and the tasks' records) is written once at the end.
]]
local R = KEYS[1]
local out = {}
-- Read once, counted here, written at the end.
local total = tonumber(redis.call('HGET', R, 'n') or '0')
local seq = tonumber(redis.call('HGET', R, 'seq') or '0')
local firstSeq = seq
local mine, came = {}, {}
local queues, queueOrder = {}, {}
local arrivals, tenantOrder = {}, {}
local keyWeights, tenantFields, records = {}, {}, {}
local capped = {}
local inCall = {}
local keysKnown, tenantsKnown = {}, {}
local function put(a)
  local taskId, tenant, fkey = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  if inCall[taskId] or redis.call('HEXISTS', R .. ':x', taskId) == 1 then return 1, 0 end
  local n = mine[tenant]
  if n == nil then
    n = tonumber(redis.call('HGET', R, 'n:' .. tenant) or '0')
    mine[tenant] = n
  end
  if n >= tonumber(ARGV[a + 7]) then return -1, n end
  if total >= tonumber(ARGV[a + 8]) then return -2, total end
  inCall[taskId] = true
  seq = seq + 1
  -- Within a fairness key: highest priority first, then arrival.
  local score = (9 - tonumber(ARGV[a + 5])) * 4294967296 + seq
  local q = R .. ':q:' .. tenant .. ':' .. fkey
  local entries = queues[q]
  if not entries then
    entries = {}
    queues[q] = entries
    queueOrder[#queueOrder + 1] = q
  end
  entries[#entries + 1] = score
  entries[#entries + 1] = taskId
  local ks = R .. ':k:' .. tenant
  local kid = tenant .. ':' .. fkey
  if not keysKnown[kid] then
    keysKnown[kid] = true
    if not redis.call('ZSCORE', ks, fkey) then
      redis.call('ZADD', ks, tonumber(redis.call('HGET', R, 'vt:' .. tenant) or '0'), fkey)
    end
  end
  keyWeights[kid] = ARGV[a + 4]
  tenantFields[tenant] = { ARGV[a + 3], ARGV[a + 9] }
  capped[tenant] = tonumber(ARGV[a + 9]) > 0
  if not tenantsKnown[tenant] then
    tenantsKnown[tenant] = true
    tenantOrder[#tenantOrder + 1] = tenant
    if not redis.call('ZSCORE', R .. ':t', tenant) then
      local v = tonumber(redis.call('HGET', R, 'v') or '0')
      local f = tonumber(redis.call('HGET', R, 'f:' .. tenant) or '0')
      redis.call('ZADD', R .. ':t', math.max(v, f), tenant)
    end
  end
  local e = arrivals[tenant]
  if not e then
    e = {}
    arrivals[tenant] = e
  end
  e[#e + 1] = ARGV[a + 6]
  e[#e + 1] = taskId
  records[#records + 1] = taskId
  records[#records + 1] = tenant .. '\t' .. fkey .. '\t' .. score .. '\t' .. ARGV[a + 6] .. '\t' .. total .. '\t' .. ARGV[a + 4]
  local ahead = total
  total = total + 1
  mine[tenant] = n + 1
  came[tenant] = (came[tenant] or 0) + 1
  return 0, ahead
end
for a = 1, #ARGV, 10 do
  local code, n = put(a)
  out[#out + 1] = code
  out[#out + 1] = n
end
if seq == firstSeq then return out end
for _, q in ipairs(queueOrder) do redis.call('ZADD', q, unpack(queues[q])) end
local kw = {}
for kid, w in pairs(keyWeights) do
  kw[#kw + 1] = kid
  kw[#kw + 1] = w
end
redis.call('HSET', R .. ':kw', unpack(kw))
local meta = { 'n', total, 'seq', seq }
for _, tenant in ipairs(tenantOrder) do
  local tf = tenantFields[tenant]
  if tf then
    meta[#meta + 1] = 'w:' .. tenant
    meta[#meta + 1] = tf[1]
    meta[#meta + 1] = 'mi:' .. tenant
    meta[#meta + 1] = tf[2]
    meta[#meta + 1] = 'n:' .. tenant
    meta[#meta + 1] = mine[tenant]
    if capped[tenant] then redis.call('SADD', R .. ':capped', tenant)
    else redis.call('SREM', R .. ':capped', tenant) end
    redis.call('ZADD', R .. ':e:' .. tenant, unpack(arrivals[tenant]))
    redis.call('HINCRBY', R, 'in:' .. tenant, came[tenant])
  end
end
redis.call('HSET', R, unpack(meta))
redis.call('HSET', R .. ':x', unpack(records))
return out
