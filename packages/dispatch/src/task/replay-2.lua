--[[
  Sends a dead-lettered task again as a fresh attempt with a fresh attempt budget and, when it
  had a timeout, a fresh deadline of the same length. Only a dead task can be replayed, so two
  concurrent replays send it once.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list

  Output: { 0, new attempt, capability }
  Errors: -1 unknown_task (no such task), -9 not_dead
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'capability', 'deadline_ms', 'created_at')
if not cur[1] then return { -1 } end
if cur[1] ~= 'dead' then return { -9 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local attempt = tonumber(cur[2]) + 1
redis.call('HSET', KEYS[1], 'status', 'retry_wait', 'attempt', attempt, 'budget_from', attempt - 1,
  'due_at', now, 'received_at', 0, 'sent_at', 0, 'assigned_at', now, 'tl', 1)
redis.call('HDEL', KEYS[1], 'dead_reason', 'dead_at', 'error')
local deadline = tonumber(cur[4]) or 0
if deadline > 0 then
  redis.call('HSET', KEYS[1], 'deadline_ms', now + (deadline - (tonumber(cur[5]) or deadline)))
end
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('RPUSH', KEYS[2], '{"stage":"replayed","at":' .. now .. ',"attempt":' .. attempt .. '}')
return { 0, attempt, cur[3] }
