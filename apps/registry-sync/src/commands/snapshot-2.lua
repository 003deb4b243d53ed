--[[
  Writes a new registry snapshot with the next version and announces it.

  KEYS[1] snapshot: the snapshot string   KEYS[2] version: the snapshot version counter
  ARGV[1] agents: JSON array   ARGV[2] channel: the channel to publish the version on

  Output: { version, written_at_ms }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local version = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], '{"version":' .. version .. ',"written_at":' .. now .. ',"agents":' .. ARGV[1] .. '}')
redis.call('PUBLISH', ARGV[2], version)
return { version, now }
