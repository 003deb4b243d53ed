--[[
  Writes a new registry snapshot with the next version and announces it.

  KEYS[1] snapshot: the snapshot string   KEYS[2] version: the snapshot version counter
  KEYS[3] deltas: the delta stream (read only: its last entry keeps the counter ahead of it)
  ARGV[1] agents: JSON array   ARGV[2] channel: the channel to publish the version on

  Output: { version, written_at_ms }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local version = redis.call('INCR', KEYS[2])
-- A counter lost while the stream stayed (a restore of one key) would reuse versions.
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
if last then
  local lastVersion = tonumber(string.match(last[1], '^(%d+)'))
  if version <= lastVersion then
    version = lastVersion + 1
    redis.call('SET', KEYS[2], version)
  end
end
redis.call('SET', KEYS[1], '{"version":' .. version .. ',"written_at":' .. now .. ',"agents":' .. ARGV[1] .. '}')
redis.call('PUBLISH', ARGV[2], version)
return { version, now }
