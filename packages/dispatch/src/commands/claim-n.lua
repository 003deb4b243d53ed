--[[
  Claims task_ids for submissions and assigns each to its chosen agent, atomically with the
  idempotency check: every submission of one task shard that a router claims in one tick, in one
  call (their keys share the shard's hash tag, keys.ts `taskShardTag`). Each claim is checked
  and written as if it ran alone. The request's nonce tells a re-sent command (ioredis replays
  commands after a dropped connection) from a second submission of the same task_id. The task's
  `accepted` stage is its created_at; its `sent` stage is the delivery's pending entry, then the
  fields the first ack copies (no timeline list entry for either: task/timeline.ts).

  KEYS[1] index: the shard's search index (keys.ts taskIndex): each created task_id is added,
  scored by its created_at (one ZADD per call)
  KEYS[2..] tasks: the task hash of each claim, in the claims' order
  ARGV[1..] claims, per claim: nonce (the submission's), taskId, capability, payload (JSON
  text), callbackTopic, traceId, timeoutMs (0 = none), agentId ("" for a pooled task), epoch
  (the agent's), route (the routing record of the send, task/timeline.ts packRoute), now (Redis
  time as the router reads it, redis-clock.ts, epoch ms: the task's own times, created_at and
  its deadline; no lease arithmetic happens here), then its constraints: how many fields and
  values follow, then the task's constraints that are set (task-spec.ts constraintArgs), each a
  field and its value, which every later send reads: tags (JSON array), region, region_policy,
  session_id, parent_task_id, hops, trace_agents (JSON array), tenant, priority

  Output: per claim three slots: 0 created (its created_at is its now, its deadline timeoutMs
  after it; 0 and 0 fill the slots) | 1 ours already (re-sent or re-assigned), created_at_ms,
  deadline_ms | 2 when the task_id belongs to an earlier submission, 0 and 0
]]
local out = {}
local indexed = {}
local a = 1
for k = 2, #KEYS do
  local key = KEYS[k]
  local nonce, now = ARGV[a], ARGV[a + 10]
  local n = tonumber(ARGV[a + 11])
  local last = a + 11 + n
  local cur = redis.call('HMGET', key, 'nonce', 'status', 'created_at', 'deadline_ms')
  if cur[2] then
    if cur[1] ~= nonce then
      out[#out + 1] = 2
      out[#out + 1] = 0
      out[#out + 1] = 0
    else
      if cur[2] == 'accepted' then
        redis.call('HSET', key, 'agent_id', ARGV[a + 7], 'epoch', ARGV[a + 8], 'assigned_at', now,
          'route', ARGV[a + 9])
      end
      out[#out + 1] = 1
      out[#out + 1] = tonumber(cur[3]) or 0
      out[#out + 1] = tonumber(cur[4]) or 0
    end
  else
    -- Values go to Redis as the strings they came in as: Lua turns a number into text slowly.
    local deadline = '0'
    if ARGV[a + 6] ~= '0' then deadline = tonumber(now) + tonumber(ARGV[a + 6]) end
    -- Only the constraints the task has (a missing field reads as none), so the hash of a task
    -- without any stays as small as it was.
    redis.call('HSET', key,
      'task_id', ARGV[a + 1], 'capability', ARGV[a + 2], 'payload', ARGV[a + 3],
      'callback_topic', ARGV[a + 4], 'trace_id', ARGV[a + 5], 'status', 'accepted', 'attempt', '1',
      'agent_id', ARGV[a + 7], 'epoch', ARGV[a + 8], 'nonce', nonce, 'created_at', now,
      'assigned_at', now, 'deadline_ms', deadline, 'route', ARGV[a + 9], unpack(ARGV, a + 12, last))
    indexed[#indexed + 1] = now
    indexed[#indexed + 1] = ARGV[a + 1]
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
  a = last + 1
end
if #indexed > 0 then redis.call('ZADD', KEYS[1], unpack(indexed)) end
return out
