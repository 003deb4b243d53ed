--[[
  Appends outcomes to an agent's health window (the `outcomes` field, one letter each, newest
  last, packages/protocol health.ts) and keeps its last `window` letters. Deep probes decide at
  once: `probeFailures` failed probes in a row (task outcomes between them do not break the run)
  make a HEALTHY or DEGRADED agent SUSPECT, kept so by heartbeats (`unwell`) until a probe passes.

  KEYS[1] agent: the agent record hash
  ARGV[1] letters: outcome letters, oldest first   ARGV[2] window
  ARGV[3] probeFailures: failed probes in a row that make SUSPECT

  Output: { 1 when it became SUSPECT now, 1 when a passed probe ended `unwell`, previous status }
          ({ 0, 0, "" } when the agent is gone)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'outcomes', 'unwell', 'zombie', 'degraded', 'unreachable')
if not cur[1] then return { 0, 0, '' } end
local window = tonumber(ARGV[2])
local outcomes = (cur[2] or '') .. ARGV[1]
if #outcomes > window then outcomes = string.sub(outcomes, #outcomes - window + 1) end
-- The failed probes at the end of the window, not counting task outcomes between them.
local run = 0
for i = #outcomes, 1, -1 do
  local c = string.sub(outcomes, i, i)
  if c == 'P' then break end
  if c == 'p' then run = run + 1 end
end
local suspected, cleared = 0, 0
local status = cur[1]
if run >= tonumber(ARGV[3]) then
  if not cur[3] then
    redis.call('HSET', KEYS[1], 'unwell', 1)
    if status == 'HEALTHY' or status == 'DEGRADED' then
      redis.call('HSET', KEYS[1], 'status', 'SUSPECT')
      suspected = 1
    end
  end
elseif cur[3] and string.find(ARGV[1], 'P', 1, true) then
  redis.call('HDEL', KEYS[1], 'unwell')
  cleared = 1
  if status == 'SUSPECT' and not cur[4] and not cur[6] then
    local back = 'HEALTHY'
    if cur[5] then back = 'DEGRADED' end
    redis.call('HSET', KEYS[1], 'status', back)
  end
end
redis.call('HSET', KEYS[1], 'outcomes', outcomes)
return { suspected, cleared, status }
