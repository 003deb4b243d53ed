--[[
  Renews an agent's lease on Redis server time. A returning agent comes back (OFFLINE or
  SUSPECT → HEALTHY, or DEGRADED while it is so) unless it is not ready (STARTING: still starting,
  or it said `ready: false`), suspected of being a zombie (its task loop stopped consuming while
  heartbeats went on), failing its deep probes (`unwell`), reported unreachable by its relay
  (`unreachable`) or held for flapping (`damped_until`, set by lease-4.lua); those stay until
  resolved.

  KEYS[1] agent: the agent record hash
  ARGV[1] tokenHash: the token secret's hash   ARGV[2] tokenEpoch: the token's epoch
  ARGV[3] inflight: reported inflight   ARGV[4] busy: 0|1
  ARGV[5] ready: 1 to report ready, 0 to report not ready (no new tasks), "" to leave as is
  ARGV[6] reachable: 0 when the endpoint behind the agent does not answer (sets `unreachable`),
  1 when it answers again (clears it), "" to leave as is
  ARGV[7] runtime: the heartbeat's runtime figures as JSON (kept as `runtime`), "" to leave as is

  Output: { epoch, status, previous status, now_ms, instance_id }
  Errors: -5 no such agent, -2 stale epoch (a newer instance registered), -3 wrong token
]]
local cur = redis.call('HMGET', KEYS[1], 'epoch', 'token_hash', 'status', 'ready', 'zombie', 'instance_id', 'unwell', 'degraded', 'unreachable', 'damped_until')
if not cur[1] then return { -5 } end
if cur[2] ~= ARGV[1] then
  if tonumber(ARGV[2]) and tonumber(ARGV[2]) < tonumber(cur[1]) then return { -2, tonumber(cur[1]) } end
  return { -3 }
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ready = cur[4]
if ARGV[5] == '1' or ARGV[5] == '0' then ready = ARGV[5] end
local unreachable = cur[9]
if ARGV[6] == '0' then
  unreachable = '1'
  redis.call('HSET', KEYS[1], 'unreachable', 1)
elseif ARGV[6] == '1' and unreachable then
  unreachable = false
  redis.call('HDEL', KEYS[1], 'unreachable')
end
local prev = cur[3]
local status = prev
if prev ~= 'DRAINING' then
  if ready ~= '1' then status = 'STARTING'
  elseif cur[5] or cur[7] or unreachable or (tonumber(cur[10]) or 0) > now then status = 'SUSPECT'
  elseif cur[8] then status = 'DEGRADED'
  else status = 'HEALTHY' end
end
redis.call('HSET', KEYS[1], 'lease_at', now, 'reported_inflight', ARGV[3], 'busy', ARGV[4], 'status', status, 'ready', ready)
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'runtime', ARGV[7]) end
return { tonumber(cur[1]), status, prev, now, cur[6] or '' }
