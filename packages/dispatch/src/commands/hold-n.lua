--[[
  Stores submissions that wait for their time (`delay_ms`, `run_at`, a schedule's tick) as
  `delayed` tasks, or for a free slot in their capability's waiting room as `queued` ones,
  atomically with the idempotency check: a task_id that exists already is left as it is. Every
  hold of one task shard that a process makes in one tick, in one call (their keys share the
  shard's hash tag, keys.ts `taskShardTag`), each checked and written as if it ran alone. The
  caller has put each task's due entry (its watchdog member `#<task_id>`, scored at the time to
  send, or at a queued task's deadline) in the due set before; registry-sync sends a delayed task
  through the task sender once it is due, a room's drainer a queued one once a slot frees
  (assign-n.lua takes either like a retry).

  KEYS[1] index: the shard's search index (keys.ts taskIndex), where a created task is added
  KEYS[2..] tasks: per hold two keys, the task hash and its timeline list
  ARGV[1..] holds, per hold: nonce (the submission's), taskId, capability, payload (JSON text),
  callbackTopic, traceId, timeoutMs (0 = none, counted from runAt), runAt (when to send it, epoch
  ms), now (Redis time as the caller reads it, epoch ms), status (`delayed` or `queued`), then
  its constraints: how many fields and values follow, then the task's constraints that are set
  (task-spec.ts constraintArgs), each a field and its value

  Output: per hold 0 created, 1 ours already (a re-sent command), 2 the task_id belongs to an
  earlier submission
]]
local out = {}
local indexed = {}
local a = 1
local function hold(task, timeline)
  local cur = redis.call('HMGET', task, 'nonce', 'status')
  if cur[2] then
    if cur[1] == ARGV[a] then return 1 end
    return 2
  end
  local n = tonumber(ARGV[a + 10])
  local deadline = '0'
  if ARGV[a + 6] ~= '0' then deadline = tonumber(ARGV[a + 7]) + tonumber(ARGV[a + 6]) end
  redis.call('HSET', task,
    'task_id', ARGV[a + 1], 'capability', ARGV[a + 2], 'payload', ARGV[a + 3],
    'callback_topic', ARGV[a + 4], 'trace_id', ARGV[a + 5], 'status', ARGV[a + 9], 'attempt', '1',
    'agent_id', '', 'epoch', '0', 'nonce', ARGV[a], 'created_at', ARGV[a + 8],
    'assigned_at', ARGV[a + 8], 'due_at', ARGV[a + 7], 'deadline_ms', deadline, 'tl', 1,
    unpack(ARGV, a + 11, a + 10 + n))
  indexed[#indexed + 1] = ARGV[a + 8]
  indexed[#indexed + 1] = ARGV[a + 1]
  if ARGV[a + 9] == 'queued' then
    redis.call('RPUSH', timeline, '{"stage":"queued","at":' .. ARGV[a + 8] .. '}')
  else
    redis.call('RPUSH', timeline,
      '{"stage":"delayed","at":' .. ARGV[a + 8] .. ',"until":' .. ARGV[a + 7] .. '}')
  end
  return 0
end
for k = 2, #KEYS, 2 do
  out[#out + 1] = hold(KEYS[k], KEYS[k + 1])
  a = a + 11 + tonumber(ARGV[a + 10])
end
if #indexed > 0 then redis.call('ZADD', KEYS[1], unpack(indexed)) end
return out
