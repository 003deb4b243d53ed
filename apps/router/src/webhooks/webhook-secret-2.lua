--[[
  Gives a tenant a new webhook secret. The one it replaces keeps signing deliveries (beside the
  new one) until nowMs + graceMs; with no grace, or no secret before, there is no previous one.
  The tenant is listed with the other tenants that have a record.

  KEYS[1] tenant: the tenant's record hash   KEYS[2] tenants: the set of tenants with a record
  ARGV[1] tenantName   ARGV[2] secret: the new secret   ARGV[3] graceMs   ARGV[4] nowMs

  Output: epoch ms until which the previous secret signs too, 0 for none
]]
local cur = redis.call('HGET', KEYS[1], 'webhook_secret')
local untilMs = 0
if cur and tonumber(ARGV[3]) > 0 then
  untilMs = tonumber(ARGV[4]) + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'webhook_secret_previous', cur, 'webhook_secret_previous_until', untilMs)
else
  redis.call('HDEL', KEYS[1], 'webhook_secret_previous', 'webhook_secret_previous_until')
end
redis.call('HSET', KEYS[1], 'webhook_secret', ARGV[2], 'updated_at', ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
return untilMs
