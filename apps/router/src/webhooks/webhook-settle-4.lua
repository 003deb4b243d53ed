--[[
  Records the outcome of a webhook try, when the delivery is still held by that try (its due
  score is the try's lease; a router whose lease ran out finds another's there and changes
  nothing). `delivered`: off the due set, its body dropped, its hash kept keepS as a mark that the
  item was delivered. `retry`: due again after delayMs. `failed`: given up, listed in the failure
  sets (entries older than failedTtlS pruned) and kept failedTtlS. `drop`: off the due set only (a
  delivery whose hash is gone).

  KEYS[1] due: the deliveries' due set   KEYS[2] delivery: the delivery's hash
  KEYS[3] failed: every tenant's given-up deliveries   KEYS[4] tenantFailed: its tenant's
  ARGV[1] id: the delivery id   ARGV[2] lease: the due score the try held
  ARGV[3] outcome: delivered | retry | failed | drop   ARGV[4] delayMs: a retry's wait
  ARGV[5] httpStatus: the try's HTTP status, 0 for none   ARGV[6] error: what went wrong, or ''
  ARGV[7] keepS: how long a delivered mark is kept   ARGV[8] failedTtlS: how long a failure is kept

  Output: 1 recorded, 0 not this try's to record
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == 'drop' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HINCRBY', KEYS[2], 'tries', 1)
redis.call('HSET', KEYS[2], 'last_at', now, 'last_status', ARGV[5], 'last_error', ARGV[6])
if ARGV[3] == 'delivered' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[2], 'status', 'delivered', 'next_at', 0)
  redis.call('HDEL', KEYS[2], 'body')
  redis.call('EXPIRE', KEYS[2], ARGV[7])
elseif ARGV[3] == 'retry' then
  local at = now + tonumber(ARGV[4])
  redis.call('ZADD', KEYS[1], at, ARGV[1])
  redis.call('HSET', KEYS[2], 'next_at', at)
else
  local ttl = tonumber(ARGV[8])
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[2], 'status', 'failed', 'next_at', 0)
  redis.call('EXPIRE', KEYS[2], ttl)
  for k = 3, 4 do
    redis.call('ZADD', KEYS[k], now, ARGV[1])
    redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', now - ttl * 1000)
    redis.call('EXPIRE', KEYS[k], ttl)
  end
end
return 1
