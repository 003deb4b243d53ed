--[[
  Appends outcomes to an agent's health window (the `outcomes` field, one letter each, newest
  last, packages/protocol health.ts) and keeps its last `window` letters. Deep probes decide at
  once: `probeFailures` failed probes in a row (task outcomes between them do not break the run)
  make a HEALTHY or DEGRADED agent SUSPECT, kept so by heartbeats (`unwell`) until a probe passes.
  The latest probe's health check answer is kept as `health_check`. An agent SUSPECT for a
  dependency flagged down fleet-wide (`dependency_down`, dependency-watch.ts) comes back only on a
  passed probe whose answer no longer reports that dependency down.

  KEYS[1] agent: the agent record hash
  ARGV[1] letters: outcome letters, oldest first   ARGV[2] window
  ARGV[3] probeFailures: failed probes in a row that make SUSPECT
  ARGV[4] healthCheck: the latest probe's answer as JSON (`AgentHealthCheck`), or "" for none

  Output: { 1 when it became SUSPECT now, 1 when a passed probe ended `unwell`, previous status }
          ({ 0, 0, "" } when the agent is gone)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'outcomes', 'unwell', 'zombie', 'degraded', 'unreachable', 'dependency_down')
if not cur[1] then return { 0, 0, '' } end
-- The flagged dependency is still down in the latest answer (a passed probe may still list it).
local function stillDown()
  if not cur[7] or ARGV[4] == '' then return false end
  local ok, check = pcall(cjson.decode, ARGV[4])
  if not ok or type(check) ~= 'table' or type(check.dependencies) ~= 'table' then return false end
  local dep = check.dependencies[cur[7]]
  return type(dep) == 'table' and dep.ok == false
end
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
elseif cur[3] and string.find(ARGV[1], 'P', 1, true) and not stillDown() then
  redis.call('HDEL', KEYS[1], 'unwell', 'dependency_down')
  cleared = 1
  if status == 'SUSPECT' and not cur[4] and not cur[6] then
    local back = 'HEALTHY'
    if cur[5] then back = 'DEGRADED' end
    redis.call('HSET', KEYS[1], 'status', back)
  end
end
redis.call('HSET', KEYS[1], 'outcomes', outcomes)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'health_check', ARGV[4]) end
return { suspected, cleared, status }
