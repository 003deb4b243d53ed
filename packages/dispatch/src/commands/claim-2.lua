--[[
  Claims a task_id for a submission and assigns it to the chosen agent, atomically with the
  idempotency check. The request's nonce tells a re-sent command (ioredis replays commands after
  a dropped connection) from a second submission of the same task_id. The task's `accepted`
  stage is its created_at; its `sent` stage is the delivery's pending entry, then the fields the
  first ack copies (no timeline list entry for either: task/timeline.ts).

  KEYS[1] task: the task hash
  KEYS[2] timeline: its timeline list (unused: a claim writes no list entry)
  ARGV[1] nonce: the submission's   ARGV[2] taskId   ARGV[3] capability
  ARGV[4] payload: JSON text   ARGV[5] callbackTopic   ARGV[6] traceId
  ARGV[7] timeoutMs: 0 = none   ARGV[8] agentId: "" for a pooled task   ARGV[9] epoch: the agent's
  ARGV[10] route: the routing record of the send (task/timeline.ts packRoute)
  ARGV[11] now: Redis time as the router reads it (redis-clock.ts), epoch ms — the task's own
  times (created_at, its deadline) only; no lease arithmetic happens here
  ARGV[12..] constraints: the task's constraints that are set (task-spec.ts constraintArgs),
  each a field and its value, which every later send reads: tags (JSON array), region,
  region_policy, session_id, parent_task_id, hops, trace_agents (JSON array), tenant, priority

  Output: 0 created (its created_at is ARGV[11], its deadline ARGV[7] after it: no reply table)
          { 1 ours already (re-sent or re-assigned), created_at_ms, deadline_ms }
          2 when the task_id belongs to an earlier submission
]]
local now = ARGV[11]
local cur = redis.call('HMGET', KEYS[1], 'nonce', 'status', 'created_at', 'deadline_ms')
if cur[2] then
  if cur[1] ~= ARGV[1] then return 2 end
  if cur[2] == 'accepted' then
    redis.call('HSET', KEYS[1], 'agent_id', ARGV[8], 'epoch', ARGV[9], 'assigned_at', now, 'route', ARGV[10])
  end
  return { 1, tonumber(cur[3]), tonumber(cur[4]) }
end
-- Values go to Redis as the strings they came in as: Lua turns a number into text slowly.
local deadline = '0'
if ARGV[7] ~= '0' then deadline = tonumber(now) + tonumber(ARGV[7]) end
-- ARGV[12..]: only the constraints the task has (a missing field reads as none), so the hash of
-- a task without any stays as small as it was.
redis.call('HSET', KEYS[1],
  'task_id', ARGV[2], 'capability', ARGV[3], 'payload', ARGV[4], 'callback_topic', ARGV[5],
  'trace_id', ARGV[6], 'status', 'accepted', 'attempt', '1', 'agent_id', ARGV[8], 'epoch', ARGV[9],
  'nonce', ARGV[1], 'created_at', now, 'assigned_at', now, 'deadline_ms', deadline,
  'route', ARGV[10], unpack(ARGV, 12))
return 0
