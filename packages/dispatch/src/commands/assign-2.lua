--[[
  Takes a task that waits for a retry (retry_wait), for its time (delayed) or in its waiting room
  (queued) for delivery to the chosen agent. Only one
  dispatcher wins a given attempt, so two sweepers running at once re-route a task once. The
  winner may re-assign (next candidate) with the same nonce; a stale assignment (a dispatcher
  that died between assigning and delivering: the caller checked that the agent holds no
  delivery of it) is re-taken with a new attempt after the grace.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  ARGV[1] nonce: the sender's   ARGV[2] attempt: the expected attempt
  ARGV[3] agentId: the chosen agent   ARGV[4] epoch: its epoch
  ARGV[5] graceMs: grace ms for a stale assignment
  ARGV[6] route: the routing record of the send (packRoute)

  Output: { 0, attempt, since, deadline_ms } when assigned to the caller: since is the later of
          created_at and due_at (a delayed task's first `sent` event then has its lateness as latency_ms)
  Errors: -1 unknown_task (no such task), -8 held_elsewhere (someone else holds it or the state
          moved on)
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'nonce', 'assigned_at', 'created_at', 'deadline_ms', 'due_at')
if not cur[1] then return { -1 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local attempt = tonumber(cur[2])
-- 'tl': the task has a timeline list (its expiry is set with the hash's once final).
local listed = {}
if attempt ~= tonumber(ARGV[2]) then return { -8 } end
-- A delayed task's first attempt counts from its due time: the sent event's latency is its lateness.
local since = math.max(tonumber(cur[5]) or 0, tonumber(cur[7]) or 0)
if cur[1] == 'retry_wait' or cur[1] == 'delayed' or cur[1] == 'queued' or (cur[1] == 'accepted' and cur[3] == ARGV[1]) then
  -- ours to assign
elseif cur[1] == 'accepted' and now - (tonumber(cur[4]) or 0) >= tonumber(ARGV[5]) then
  -- a dispatcher died after assigning: a new attempt, so a late delivery of the old one is refused
  attempt = attempt + 1
  redis.call('RPUSH', KEYS[2], '{"stage":"retried","at":' .. now .. ',"attempt":' .. attempt .. ',"reason":"undelivered"}')
  listed = { 'tl', 1 }
else
  return { -8 }
end
redis.call('HSET', KEYS[1], 'status', 'accepted', 'attempt', attempt, 'nonce', ARGV[1],
  'agent_id', ARGV[3], 'epoch', ARGV[4], 'assigned_at', now, 'received_at', 0, 'sent_at', 0,
  'route', ARGV[6], unpack(listed))
return { 0, attempt, since, tonumber(cur[6]) or 0 }
