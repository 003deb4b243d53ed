--[[
  Writes a registry delta with the next snapshot version and announces it: entry `<version>-0` of
  the delta stream carries the agents that changed and the ids of those gone.

  KEYS[1] version: the snapshot version counter   KEYS[2] deltas: the delta stream
  ARGV[1] agents: JSON array of changed agents   ARGV[2] removed: JSON array of agent ids
  ARGV[3] channel: the channel to publish the version on   ARGV[4] maxlen: entries kept (about)

  Output: { version, written_at_ms }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local version = redis.call('INCR', KEYS[1])
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
if last then
  local lastVersion = tonumber(string.match(last[1], '^(%d+)'))
  if version <= lastVersion then
    version = lastVersion + 1
    redis.call('SET', KEYS[1], version)
  end
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], version .. '-0',
  'agents', ARGV[1], 'removed', ARGV[2], 'written_at', now)
redis.call('PUBLISH', ARGV[3], version)
return { version, now }
