--[[
  Makes a given-up webhook delivery pending again, due at once, its tries counted from 0; its id
  (the `webhook-id` header) and body stay the same.

  KEYS[1] due: the deliveries' due set   KEYS[2] delivery: the delivery's hash
  KEYS[3] failed: every tenant's given-up deliveries   KEYS[4] tenantFailed: its tenant's
  ARGV[1] id: the delivery id

  Output: 1 pending again, 0 not a given-up delivery
]]
if redis.call('HGET', KEYS[2], 'status') ~= 'failed' then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[2], 'status', 'pending', 'tries', 0, 'next_at', now)
redis.call('PERSIST', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[1], now, ARGV[1])
return 1
