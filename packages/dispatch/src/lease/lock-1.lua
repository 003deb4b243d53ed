--[[
  Takes or renews a lease lock for a duty that must run once across instances.

  KEYS[1] lock: the lock key   ARGV[1] owner   ARGV[2] leaseMs: lease ms

  Output: 1 when the caller holds the lock, 0 otherwise
]]
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if owner then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
