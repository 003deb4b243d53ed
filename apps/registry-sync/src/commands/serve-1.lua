--[[
  Switches an agent out of observation mode: from now on it gets caller traffic. The agent itself
  may, with its token (the same check as heartbeat-1.lua), or an operator (its key checked by the
  route), who may set its routing weight in the same step.

  KEYS[1] agent: the agent record hash
  ARGV[1] tokenHash: the token secret's hash, or "" for an operator
  ARGV[2] tokenEpoch: the token's epoch, or ""
  ARGV[3] weight: the weight to set (0.1–10), or "" to leave it

  Output: { epoch } switched (or already serving)
  Errors: -5 no such agent, -2 stale epoch (a newer instance registered), -3 wrong token
]]
local cur = redis.call('HMGET', KEYS[1], 'epoch', 'token_hash')
if not cur[1] then return { -5 } end
if ARGV[1] ~= '' and cur[2] ~= ARGV[1] then
  if tonumber(ARGV[2]) and tonumber(ARGV[2]) < tonumber(cur[1]) then return { -2, tonumber(cur[1]) } end
  return { -3 }
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'observe', 0, 'weight', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'observe', 0)
end
return { tonumber(cur[1]) }
