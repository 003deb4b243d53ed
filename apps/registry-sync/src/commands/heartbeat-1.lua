--[[
  Renews an agent's lease on Redis server time.

  KEYS[1] agent record hash
  ARGV[1] token hash   ARGV[2] token epoch   ARGV[3] reported inflight   ARGV[4] busy (0|1)

  Output: { epoch, status, previous status, now_ms }
  Errors: -1 no such agent, -2 stale epoch (a newer instance registered), -3 wrong token
]]
local cur = redis.call('HMGET', KEYS[1], 'epoch', 'token_hash', 'status')
if not cur[1] then return { -1 } end
if cur[2] ~= ARGV[1] then
  if tonumber(ARGV[2]) and tonumber(ARGV[2]) < tonumber(cur[1]) then return { -2, tonumber(cur[1]) } end
  return { -3 }
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local prev = cur[3]
local status = prev
if prev == 'SUSPECT' or prev == 'OFFLINE' or prev == 'STARTING' then status = 'HEALTHY' end
redis.call('HSET', KEYS[1], 'lease_at', now, 'reported_inflight', ARGV[3], 'busy', ARGV[4], 'status', status)
return { tonumber(cur[1]), status, prev, now }
