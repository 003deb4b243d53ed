--[[
  Takes a slot of a key's in-flight quota, atomically across routers (one key, one slot).

  KEYS[1] inflight: the key's in-flight set (`inflightOf(keyId)`: scoped task_id → accepted at, ms)
  ARGV[1] taskId: the scoped task_id   ARGV[2] now: ms   ARGV[3] max: the quota
  ARGV[4] pruneBefore: members accepted before this are dropped (a removal that never came)
  ARGV[5] ttlMs: the set's TTL, ms (an idle key's set goes away)

  Output: 1 taken, 2 the task_id holds a slot already (a repeated submission), 0 the quota is full
]]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 2 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
