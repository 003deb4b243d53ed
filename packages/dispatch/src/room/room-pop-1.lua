--[[
  Takes up to ARGV[2] tasks from a waiting room in fair order (room-enqueue-1.lua): the tenant
  with the lowest virtual start tag — passing over a tenant that holds its max_inflight slots
  (`:run:<tenant>`, the tasks taken for it and not yet seen finished) — then its fairness key
  with the lowest tag, then that key's first task. Each tag then moves on by 1 / weight. A taken
  task moves to the room's `taking` set until its send is done (room-done-1.lua) or given back
  (room-return-1.lua); one left there by a process that stopped is given back by a sweep.

  KEYS[1] room: the room's meta hash (room-enqueue-1.lua)
  ARGV[1] now: epoch ms   ARGV[2] most: how many to take at most
  ARGV[3] skip: tenants passed over this time, tab-separated ('' for none): the caller knows
          their destination is full (a pool holding its bound)

  Output: per task taken, four slots: task_id, tenant, its wait so far in ms, how many waited
          before it when it came

  What no later take of the call reads (the counts, the virtual times, the `taking` set, the
  tasks' records) is written once at the end; weights and bounds are read once per tenant.
]]
local R = KEYS[1]
local now = tonumber(ARGV[1])
local out = {}
local function split(s)
  local f = {}
  for part in string.gmatch(s .. '\t', '([^\t]*)\t') do f[#f + 1] = part end
  return f
end
local skip = {}
if ARGV[3] ~= '' then
  for _, t in ipairs(split(ARGV[3])) do skip[t] = true end
end
-- Read once per tenant (nothing here writes them): its weight and its max_inflight.
local weights, bounds = {}, {}
local function bound(tenant)
  local mi = bounds[tenant]
  if mi == nil then
    mi = tonumber(redis.call('HGET', R, 'mi:' .. tenant) or '0')
    bounds[tenant] = mi
  end
  return mi
end
-- The first tenant by tag not holding all its slots nor skipped (the first 32 looked at).
local function nextTenant()
  local heads = redis.call('ZRANGE', R .. ':t', 0, 31, 'WITHSCORES')
  for i = 1, #heads, 2 do
    if not skip[heads[i]] then
      local mi = bound(heads[i])
      if mi <= 0 or redis.call('ZCARD', R .. ':run:' .. heads[i]) < mi then
        return heads[i], tonumber(heads[i + 1])
      end
    end
  end
  return nil
end
-- Written at the end: tenant -> its own virtual time (false: gone), its count taken, its
-- waiting tasks taken; the room's virtual time; the `taking` entries and the records.
local vts, taken, left = {}, {}, {}
local v
local taking, records = {}, {}
local order = {}
for _ = 1, tonumber(ARGV[2]) do
  local tenant, ttag = nextTenant()
  if not tenant then break end
  local ks = R .. ':k:' .. tenant
  local kh = redis.call('ZRANGE', ks, 0, 0, 'WITHSCORES')
  if #kh == 0 then
    redis.call('ZREM', R .. ':t', tenant)
  else
    local fkey, ktag = kh[1], tonumber(kh[2])
    local q = R .. ':q:' .. tenant .. ':' .. fkey
    local popped = redis.call('ZPOPMIN', q)
    local taskId = popped[1]
    local kwField = tenant .. ':' .. fkey
    local kw = tonumber(redis.call('HGET', R .. ':kw', kwField) or '1')
    if vts[tenant] == nil then order[#order + 1] = tenant end
    vts[tenant] = ktag
    if redis.call('EXISTS', q) == 1 then
      redis.call('ZADD', ks, ktag + 1 / kw, fkey)
    else
      redis.call('ZREM', ks, fkey)
      redis.call('HDEL', R .. ':kw', kwField)
    end
    local w = weights[tenant]
    if w == nil then
      w = tonumber(redis.call('HGET', R, 'w:' .. tenant) or '1')
      weights[tenant] = w
    end
    v = ttag
    if redis.call('EXISTS', ks) == 1 then
      redis.call('ZADD', R .. ':t', ttag + 1 / w, tenant)
    else
      redis.call('ZREM', R .. ':t', tenant)
      redis.call('HSET', R, 'f:' .. tenant, ttag + 1 / w)
      vts[tenant] = false
    end
    if taskId then
      local x = redis.call('HGET', R .. ':x', taskId) or (tenant .. '\t' .. fkey .. '\t0\t' .. now .. '\t0\t1')
      local f = split(x)
      local l = left[tenant]
      if not l then
        l = {}
        left[tenant] = l
      end
      l[#l + 1] = taskId
      taking[#taking + 1] = now
      taking[#taking + 1] = taskId
      if bound(tenant) > 0 then
        redis.call('ZADD', R .. ':run:' .. tenant, now, taskId)
      end
      -- Kept until done: a task given back returns to its place (its tags as they were).
      records[#records + 1] = taskId
      records[#records + 1] = table.concat(f, '\t', 1, 6) .. '\t' .. ttag .. '\t' .. ktag
      taken[tenant] = (taken[tenant] or 0) + 1
      out[#out + 1] = taskId
      out[#out + 1] = tenant
      out[#out + 1] = math.max(0, now - (tonumber(f[4]) or now))
      out[#out + 1] = tonumber(f[5]) or 0
    end
  end
end
if v ~= nil then redis.call('HSET', R, 'v', v) end
for _, tenant in ipairs(order) do
  if vts[tenant] then redis.call('HSET', R, 'vt:' .. tenant, vts[tenant])
  else redis.call('HDEL', R, 'vt:' .. tenant) end
end
if #taking > 0 then
  redis.call('ZADD', R .. ':taking', unpack(taking))
  redis.call('HSET', R .. ':x', unpack(records))
  redis.call('HINCRBY', R, 'n', -(#taking / 2))
end
for tenant, n in pairs(taken) do
  redis.call('ZREM', R .. ':e:' .. tenant, unpack(left[tenant]))
  if redis.call('HINCRBY', R, 'n:' .. tenant, -n) <= 0 then redis.call('HDEL', R, 'n:' .. tenant) end
end
return out
