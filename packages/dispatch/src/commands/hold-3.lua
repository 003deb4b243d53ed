--[[
  Stores a submission that waits for its time (`delay_ms`, `run_at`, a schedule's tick) as a
  `delayed` task, or for a free slot in its capability's waiting room as a `queued` one,
  atomically with the idempotency check: a task_id that exists already is left as it is. The
  caller has put the task's due entry (its watchdog member `#<task_id>`, scored at the time to
  send, or at a queued task's deadline) in the due set just before, in the same write;
  registry-sync sends a delayed task through the task sender once it is due, a room's drainer a
  queued one once a slot frees (assign-2.lua takes either like a retry).

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  KEYS[3] index: its shard's search index (keys.ts taskIndex), where a created task is added
  ARGV[1] nonce: the submission's   ARGV[2] taskId   ARGV[3] capability
  ARGV[4] payload: JSON text   ARGV[5] callbackTopic   ARGV[6] traceId
  ARGV[7] timeoutMs: 0 = none, counted from ARGV[8]   ARGV[8] runAt: when to send it, epoch ms
  ARGV[9] now: Redis time as the caller reads it, epoch ms
  ARGV[10] status: `delayed` or `queued`
  ARGV[11..] constraints: the task's constraints that are set (task-spec.ts constraintArgs),
  each a field and its value

  Output: 0 created, 1 ours already (a re-sent command), 2 the task_id belongs to an earlier submission
]]
local cur = redis.call('HMGET', KEYS[1], 'nonce', 'status')
if cur[2] then
  if cur[1] == ARGV[1] then return 1 end
  return 2
end
local deadline = '0'
if ARGV[7] ~= '0' then deadline = tonumber(ARGV[8]) + tonumber(ARGV[7]) end
redis.call('HSET', KEYS[1],
  'task_id', ARGV[2], 'capability', ARGV[3], 'payload', ARGV[4], 'callback_topic', ARGV[5],
  'trace_id', ARGV[6], 'status', ARGV[10], 'attempt', '1', 'agent_id', '', 'epoch', '0',
  'nonce', ARGV[1], 'created_at', ARGV[9], 'assigned_at', ARGV[9], 'due_at', ARGV[8],
  'deadline_ms', deadline, 'tl', 1, unpack(ARGV, 11))
redis.call('ZADD', KEYS[3], ARGV[9], ARGV[2])
if ARGV[10] == 'queued' then
  redis.call('RPUSH', KEYS[2], '{"stage":"queued","at":' .. ARGV[9] .. '}')
else
  redis.call('RPUSH', KEYS[2], '{"stage":"delayed","at":' .. ARGV[9] .. ',"until":' .. ARGV[8] .. '}')
end
return 0
