--[[
  Takes tasks that wait for a retry (retry_wait), for their time (delayed) or in their waiting
  room (queued) for delivery to the chosen agents: every assignment of one task shard that a
  process makes in one tick, in one call (their keys share the shard's hash tag, keys.ts
  `taskShardTag`), each checked and written as if it ran alone. Only one dispatcher wins a given
  attempt, so two sweepers running at once re-route a task once. The winner may re-assign (next
  candidate) with the same nonce; a stale assignment (a dispatcher that died between assigning
  and delivering: the caller checked that the agent holds no delivery of it) is re-taken with a
  new attempt after the grace.

  KEYS[1..] tasks: per assignment two keys, the task hash and its timeline list
  ARGV[1..] assignments, per assignment: nonce (the sender's), attempt (the expected attempt),
  agentId (the chosen agent), epoch (its epoch), graceMs (grace ms for a stale assignment),
  route (the routing record of the send, packRoute)

  Output: per assignment four slots: 0, attempt, since, deadline_ms when assigned to the caller
          (since is the later of created_at and due_at: a delayed task's first `sent` event then
          has its lateness as latency_ms) | -1, 0, 0, 0 unknown_task (no such task) | -8, 0, 0, 0
          held_elsewhere (someone else holds it or the state moved on)
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local function assign(task, timeline, a)
  local cur = redis.call('HMGET', task, 'status', 'attempt', 'nonce', 'assigned_at', 'created_at', 'deadline_ms', 'due_at')
  if not cur[1] then return -1 end
  local attempt = tonumber(cur[2])
  -- 'tl': the task has a timeline list (its expiry is set with the hash's once final).
  local listed = {}
  if attempt ~= tonumber(ARGV[a + 1]) then return -8 end
  -- A delayed task's first attempt counts from its due time: the sent event's latency is its lateness.
  local since = math.max(tonumber(cur[5]) or 0, tonumber(cur[7]) or 0)
  if cur[1] == 'retry_wait' or cur[1] == 'delayed' or cur[1] == 'queued' or (cur[1] == 'accepted' and cur[3] == ARGV[a]) then
    -- ours to assign
  elseif cur[1] == 'accepted' and now - (tonumber(cur[4]) or 0) >= tonumber(ARGV[a + 4]) then
    -- a dispatcher died after assigning: a new attempt, so a late delivery of the old one is refused
    attempt = attempt + 1
    redis.call('RPUSH', timeline, '{"stage":"retried","at":' .. now .. ',"attempt":' .. attempt .. ',"reason":"undelivered"}')
    listed = { 'tl', 1 }
  else
    return -8
  end
  redis.call('HSET', task, 'status', 'accepted', 'attempt', attempt, 'nonce', ARGV[a],
    'agent_id', ARGV[a + 2], 'epoch', ARGV[a + 3], 'assigned_at', now, 'received_at', 0, 'sent_at', 0,
    'route', ARGV[a + 5], unpack(listed))
  return 0, attempt, since, tonumber(cur[6]) or 0
end
for i = 1, #KEYS, 2 do
  local code, attempt, since, deadline = assign(KEYS[i], KEYS[i + 1], 3 * (i - 1) + 1)
  out[#out + 1] = code
  out[#out + 1] = attempt or 0
  out[#out + 1] = since or 0
  out[#out + 1] = deadline or 0
end
return out
