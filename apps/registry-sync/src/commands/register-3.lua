--[[
  Registers an agent instance, or refreshes it when the same instance registers again.
  A new instance_id for a known agent_id raises the epoch, which fences the old instance. An agent
  belongs to the tenant of the key that first registered it: any other tenant is refused, so no
  tenant can fence another's agents (a record from before tenants is the `default` tenant's).
  Each instance keeps one ack-signing key: the same instance registering again keeps its key, a
  new instance gets the one given, and the fenced instance's key is kept as the previous one.

  KEYS[1] agent: the agent record hash   KEYS[2] inbox: the agent's inbox stream
  KEYS[3] pending: the agent's pending hash (unused here, listed to keep the slot explicit)
  ARGV[1] agentId   ARGV[2] instanceId   ARGV[3] capabilities: JSON array
  ARGV[4] maxConcurrency   ARGV[5] region   ARGV[6] channel
  ARGV[7] meta: JSON   ARGV[8] tokenHash: hash of the token's secret   ARGV[9] group: consumer group
  ARGV[10] ready: 1, or 0 for a two-phase start (no tasks until it reports ready)
  ARGV[11] tags: JSON array   ARGV[12] observe: 0|1   ARGV[13] priority   ARGV[14] weight
  ARGV[15] tenant   ARGV[16] shared: 0|1   ARGV[17] ackKey: a new ack key (hex)
  ARGV[18] inputSchemas: JSON object of the capabilities' input schemas, or "" to drop those kept
  ARGV[19] relay: 1 when a relay registers the agent (deliveries wake the relay), else 0

  Output: { epoch, now_ms, is_new_instance (0|1), ack key, fenced instance_id or "" }
  Errors: { -11, tenant } the agent_id belongs to another tenant
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local cur = redis.call('HMGET', KEYS[1], 'instance_id', 'epoch', 'registered_at', 'tenant', 'ack_key')
local epoch = 1
local isNew = 1
local registeredAt = now
local ackKey = ARGV[17]
local fenced = ''
if cur[2] then
  local owner = cur[4]
  if not owner or owner == '' then owner = 'default' end
  if owner ~= ARGV[15] then return { -11, owner } end
  epoch = tonumber(cur[2])
  if cur[1] == ARGV[2] then
    isNew = 0
    registeredAt = tonumber(cur[3]) or now
    if cur[5] then ackKey = cur[5] end
  else
    fenced = cur[1] or ''
    if cur[5] then redis.call('HSET', KEYS[1], 'ack_key_prev', cur[5], 'ack_epoch_prev', epoch) end
    epoch = epoch + 1
  end
end

-- A DEGRADED agent stays so through a registration (its outcomes are the agent's, not the
-- process's): it recovers by probes after its cooldown. Failing probes are the process's.
local status = 'STARTING'
if ARGV[10] == '1' then
  status = 'HEALTHY'
  if redis.call('HEXISTS', KEYS[1], 'degraded') == 1 then status = 'DEGRADED' end
end
redis.call('HSET', KEYS[1],
  'agent_id', ARGV[1], 'instance_id', ARGV[2], 'epoch', epoch,
  'capabilities', ARGV[3], 'max_concurrency', ARGV[4], 'region', ARGV[5],
  'channel', ARGV[6], 'meta', ARGV[7], 'token_hash', ARGV[8],
  'status', status, 'ready', ARGV[10],
  'registered_at', registeredAt, 'lease_at', now, 'reported_inflight', 0, 'busy', 0)
redis.call('HSET', KEYS[1], 'tags', ARGV[11], 'observe', ARGV[12], 'priority', ARGV[13], 'weight', ARGV[14],
  'tenant', ARGV[15], 'shared', ARGV[16], 'ack_key', ackKey)
redis.call('HDEL', KEYS[1], 'zombie', 'slow_streak', 'ejected_until', 'unwell', 'unreachable')
-- Read by routers for the capabilities' MCP tools; a registration without schemas drops those of
-- the one before. A relay's registration marks the record (deliver-3.lua wakes the relay); any
-- other registration of the agent_id takes the mark off.
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'input_schemas', ARGV[18])
else redis.call('HDEL', KEYS[1], 'input_schemas') end
if ARGV[19] == '1' then redis.call('HSET', KEYS[1], 'relay', 1)
else redis.call('HDEL', KEYS[1], 'relay') end

local ok = redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[9], '0', 'MKSTREAM')
if type(ok) == 'table' and ok.err and not string.find(ok.err, 'BUSYGROUP', 1, true) then
  return redis.error_reply(ok.err)
end
return { epoch, now, isNew, ackKey, fenced }
