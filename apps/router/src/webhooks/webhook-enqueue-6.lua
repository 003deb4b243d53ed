--[[
  Makes the webhook delivery of one callback item, once: when the delivery's hash exists already
  (the item handled again after a crash) nothing changes. Only the router holding the forwarder's
  lease (KEYS[6]) makes deliveries: one router takes a task's items in the order they were
  recorded, so their sequence numbers follow that order. The item's target is the task's
  (KEYS[3]) or, for a task a schedule fired, the schedule's (KEYS[4]); without one nothing is
  made. The delivery takes the task's next sequence number (KEYS[5]), which ends its body, and is
  due at once.

  KEYS[1] due: the deliveries' due set   KEYS[2] delivery: the delivery's hash
  KEYS[3] target: the task's webhook target   KEYS[4] scheduleTarget: its schedule's target
  KEYS[5] seq: the task's sequence counter   KEYS[6] forwarder: the forwarder's lease
  ARGV[1] id: the delivery id   ARGV[2] tenant   ARGV[3] taskId: the task_id its tenant sees
  ARGV[4] type: the event type   ARGV[5] bodyHead: the body up to its sequence number
  ARGV[6] bodyTail: the rest of the body   ARGV[7] seqTtlS: how long the counter is kept
  ARGV[8] owner: the caller's mark in the lease

  Output: { the caller's callback topic ('' for none), 1 made now | 0 made before | -1 no target }
          or { '', -2 } when the caller does not hold the lease
]]
if redis.call('GET', KEYS[6]) ~= ARGV[8] then return { '', -2 } end
local t = redis.call('HMGET', KEYS[3], 'url', 'topic')
if not t[1] then t = redis.call('HMGET', KEYS[4], 'url', 'topic') end
if not t[1] then return { '', -1 } end
local topic = t[2] or ''
if redis.call('EXISTS', KEYS[2]) == 1 then return { topic, 0 } end
local seq = redis.call('INCR', KEYS[5])
redis.call('EXPIRE', KEYS[5], ARGV[7])
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[2], 'url', t[1], 'tenant', ARGV[2], 'task_id', ARGV[3], 'type', ARGV[4],
  'body', ARGV[5] .. seq .. ARGV[6], 'status', 'pending', 'tries', 0, 'created_at', ms,
  'next_at', ms)
redis.call('ZADD', KEYS[1], ms, ARGV[1])
return { topic, 1 }
