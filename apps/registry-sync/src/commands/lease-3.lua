--[[
  Moves an agent between HEALTHY, SUSPECT and OFFLINE by the age of its lease on Redis server
  time, and removes a DRAINING agent once nothing delivered to it is unfinished.

  KEYS[1] agent record hash   KEYS[2] agent pending hash   KEYS[3] agent inbox stream
  ARGV[1] suspect after ms    ARGV[2] offline after ms

  Output: { previous status, new status, lease age ms, pending count }  ("GONE" when removed)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'lease_at')
if not cur[1] then return { 'NONE', 'NONE', 0, 0 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local age = now - (tonumber(cur[2]) or 0)
local pending = redis.call('HLEN', KEYS[2])
local status = cur[1]
local nextStatus = status
if status == 'DRAINING' then
  if pending == 0 then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
    return { status, 'GONE', age, 0 }
  end
elseif status == 'HEALTHY' or status == 'SUSPECT' or status == 'OFFLINE' then
  if age >= tonumber(ARGV[2]) then
    nextStatus = 'OFFLINE'
  elseif age >= tonumber(ARGV[1]) then
    nextStatus = 'SUSPECT'
  else
    nextStatus = 'HEALTHY'
  end
end
if nextStatus ~= status then redis.call('HSET', KEYS[1], 'status', nextStatus) end
return { status, nextStatus, age, pending }
