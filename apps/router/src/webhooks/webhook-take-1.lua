--[[
  Takes the webhook deliveries that are due, at most ARGV[2]: each is held until now + leaseMs
  (its due score becomes that lease), so no other router takes it while its try is under way;
  should this router die, the lease runs out and another takes it.

  KEYS[1] due: the deliveries' due set
  ARGV[1] leaseMs: how long a try holds its delivery   ARGV[2] count: most deliveries taken

  Output: { now (Redis time ms), next, delivery id, … }: `next` is the earliest due score left
          in the set (a taken delivery's lease counts), -1 when the set is empty, so the sender
          sleeps until then
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = { now, -1 }
local lease = now + tonumber(ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], lease, id)
  out[#out + 1] = id
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 2 then out[2] = tonumber(first[2]) end
return out
