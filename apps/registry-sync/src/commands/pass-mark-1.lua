--[[
  Records a housekeeping pass on Redis server time and says when the one before it ran, by
  whichever registry-sync instance led it. A new leader learns from it how long no pass ran at
  all — every instance stopped, or none could reach Redis — and leases get that time back
  (housekeeper.ts, lease-4.lua `grace`), so a control plane that comes back does not call the
  whole fleet OFFLINE before the agents' heartbeats reach it again.

  KEYS[1] mark: the last pass's time (keys.ts `lastPass()`)

  Output: { now ms, the previous pass's time ms or 0 }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local prev = tonumber(redis.call('GET', KEYS[1])) or 0
redis.call('SET', KEYS[1], now)
return { now, prev }
