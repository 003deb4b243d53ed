--[[
  Sets an agent's status from the age of its lease on Redis server time, its readiness,
  consumption suspicion, failing deep probes (`unwell`), an endpoint its relay cannot reach
  (`unreachable`) and DEGRADED mark, and removes a DRAINING agent once nothing delivered to it is unfinished
  (and an operator's drain hold, `drain_hold_until`, is over).
  OFFLINE comes after SUSPECT: a HEALTHY agent past the offline bound is SUSPECT for one sweep.
  `grace` (ms) is added to the lease after the sweeper itself could not run (Redis paused or
  unreachable), so a store outage does not mark the whole fleet dead.
  Flap damping: each lapse of a HEALTHY or DEGRADED agent's lease (past the suspect bound) is
  counted (`lapses` since `lapse_at`, a window of flapWindowMs); at flapLimit lapses in a window
  the agent is held SUSPECT until `damped_until` (flapHoldMs after that lapse), heartbeats or not.

  KEYS[1] agent: the agent record hash   KEYS[2] pending: the agent's pending hash
  KEYS[3] inbox: the agent's inbox stream
  KEYS[4] card: the agent's card string (removed with the record)
  ARGV[1] suspectMs: suspect after ms   ARGV[2] offlineMs: offline after ms   ARGV[3] graceMs: grace ms
  ARGV[4] flapLimit: lapses that start a hold (0: never)   ARGV[5] flapWindowMs: lapses counted within
  ARGV[6] flapHoldMs: how long a hold lasts after the lapse that started it

  Output: { previous status, new status, lease age ms, pending count, damped }  ("GONE" when
  removed; damped 1 when this sweep started a hold)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'lease_at', 'ready', 'zombie', 'unwell', 'degraded', 'unreachable', 'damped_until', 'lapses', 'lapse_at', 'drain_hold_until')
if not cur[1] then return { 'NONE', 'NONE', 0, 0 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local age = now - (tonumber(cur[2]) or 0)
local effective = age - tonumber(ARGV[3])
local pending = redis.call('HLEN', KEYS[2])
local status = cur[1]
local nextStatus = status
local dampedUntil = tonumber(cur[8]) or 0
local damped = 0
if status == 'DRAINING' then
  -- An operator's drain holds the record until its agent was told (deregister-2.lua).
  if pending == 0 and (tonumber(cur[11]) or 0) <= now then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
    return { status, 'GONE', age, 0, 0 }
  end
elseif effective >= tonumber(ARGV[2]) then
  -- A HEALTHY agent past the offline bound is SUSPECT for one sweep first. Only a sweep that did
  -- not run for a while sees that (an agent otherwise turns SUSPECT on the way), and a sweep
  -- delayed by a store pause sees every lease old at once: the heartbeats that land after the
  -- pause bring the agents back before the next sweep could call them OFFLINE.
  if status == 'HEALTHY' or status == 'DEGRADED' then nextStatus = 'SUSPECT' else nextStatus = 'OFFLINE' end
elseif cur[3] ~= '1' then
  nextStatus = 'STARTING'
elseif effective >= tonumber(ARGV[1]) or cur[4] or cur[5] or cur[7] or dampedUntil > now then
  nextStatus = 'SUSPECT'
  local limit = tonumber(ARGV[4])
  if limit > 0 and effective >= tonumber(ARGV[1]) and (status == 'HEALTHY' or status == 'DEGRADED') then
    local lapses = tonumber(cur[9]) or 0
    local since = tonumber(cur[10]) or 0
    if now - since > tonumber(ARGV[5]) then
      lapses = 0
      since = now
    end
    lapses = lapses + 1
    redis.call('HSET', KEYS[1], 'lapses', lapses, 'lapse_at', since)
    if lapses >= limit then
      redis.call('HSET', KEYS[1], 'damped_until', now + tonumber(ARGV[6]))
      damped = 1
    end
  end
elseif cur[6] then
  nextStatus = 'DEGRADED'
else
  nextStatus = 'HEALTHY'
end
if nextStatus ~= status then redis.call('HSET', KEYS[1], 'status', nextStatus) end
return { status, nextStatus, age, pending, damped }
