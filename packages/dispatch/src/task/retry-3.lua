--[[
  Decides what happens to a task attempt that will not complete: another attempt after a
  backoff (retry_wait), or the dead-letter state with a reason. Only the expected attempt moves,
  so the same decision taken twice (two sweepers, a re-processed ack) happens once.

  The attempt's ordinary stages are fields of the task hash (task/timeline.ts in
  packages/dispatch): before the next attempt reuses them, its sent and received stages move to
  the timeline list, ahead of the retried or dead entry, and the fields are cleared.

  A death while archiving is on ("1" in archive) appends the task_id to the shard's archive outbox
  and leaves the expiry to the archiver, which sets it once the task's record is in InfluxDB.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  KEYS[3] outbox: the task shard's archive outbox stream (keys.ts archiveOutbox)
  ARGV[1] attempt: the expected attempt
  ARGV[2] reason: agent_offline, receipt_timeout, failed, … (`unpooled`, and `unreachable`
  while budget_from is below maxAttempts, cost the task no attempt: budget_from is raised)
  ARGV[3] maxAttempts: max attempts in all   ARGV[4] dueAt: due_at ms for the next attempt
  ARGV[5] terminal: a reason to die at once, or "" (not_retryable, deadline, loop, no_agent)
  ARGV[6] retentionS: retention seconds for a dead task   ARGV[7] error: error text or ""
  ARGV[8] agentId: the agent the attempt was on, or ""
  ARGV[9] sentAt: ms of the attempt when the caller holds its delivery (the agent's pending
  entry) and no ack copied it into the task yet, or ""
  ARGV[10] messageId: that delivery's entry id
  ARGV[11] archive: "1" to archive the task if it dies, "" not to

  Output: { 1 retry, next attempt, capability, callback_topic, due_at, trace_id }
          { 2 dead, attempt, capability, callback_topic, reason, trace_id }
  Errors: -1 unknown_task (no such task), -6 not_assigned (the attempt moved on),
          -7 already_final (completed, dead, cancelled)
]]
--#include is-final
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'capability', 'callback_topic',
  'deadline_ms', 'budget_from', 'trace_id', 'agent_id', 'sent_at', 'message_id', 'received_at', 'route')
if not cur[1] then return { -1 } end
if tonumber(cur[2]) ~= tonumber(ARGV[1]) then return { -6 } end
if is_final(cur[1]) then return { -7 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local attempt = tonumber(cur[2])
local budgetFrom = tonumber(cur[6]) or 0
-- An attempt that never reached its endpoint (the relay could not connect) is no failure: it
-- costs no attempt, at most maxAttempts times per task, so a task refused everywhere still ends.
local free = ARGV[2] == 'unreachable' and budgetFrom < tonumber(ARGV[3])
local used = attempt - budgetFrom
if free then used = used - 1 end
local deadline = tonumber(cur[5]) or 0
local due = tonumber(ARGV[4])
local dead = ARGV[5]
if dead == '' then
  if used >= tonumber(ARGV[3]) then dead = 'max_attempts'
  elseif deadline > 0 and due >= deadline then dead = 'deadline' end
end

-- The attempt's sent and received stages, from the task's fields (or the caller's delivery).
local entries = {}
local sentAt, msgId = cur[9], cur[10]
if (tonumber(sentAt) or 0) == 0 and ARGV[9] ~= '' then sentAt, msgId = ARGV[9], ARGV[10] end
local agent = cur[8] or ''
if (tonumber(sentAt) or 0) > 0 then
  local e = '{"stage":"sent","at":' .. sentAt .. ',"attempt":' .. cur[2] .. ',"message_id":' .. cjson.encode(msgId or '')
  if agent ~= '' then e = e .. ',"agent_id":' .. cjson.encode(agent) end
  if cur[12] then e = e .. ',"route":' .. cjson.encode(cur[12]) end
  entries[#entries + 1] = e .. '}'
end
if (tonumber(cur[11]) or 0) > 0 then
  entries[#entries + 1] = '{"stage":"received","at":' .. cur[11] .. ',"agent_id":' .. cjson.encode(agent) .. ',"attempt":' .. cur[2] .. '}'
end

local from = ''
if ARGV[8] ~= '' then from = ',"agent_id":' .. cjson.encode(ARGV[8]) end
if dead ~= '' then
  redis.call('HSET', KEYS[1], 'status', 'dead', 'dead_reason', dead, 'dead_at', now,
    'sent_at', 0, 'received_at', 0, 'tl', 1)
  if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[7]) end
  entries[#entries + 1] = '{"stage":"dead","at":' .. now .. ',"attempt":' .. attempt .. ',"reason":' .. cjson.encode(dead) .. from .. '}'
  redis.call('RPUSH', KEYS[2], unpack(entries))
  if ARGV[11] == '1' then
    redis.call('XADD', KEYS[3], '*', 't', string.sub(KEYS[1], string.find(KEYS[1], '}:h:', 1, true) + 4))
  else
    redis.call('EXPIRE', KEYS[1], ARGV[6])
    redis.call('EXPIRE', KEYS[2], ARGV[6])
  end
  return { 2, attempt, cur[3], cur[4], dead, cur[7] or '' }
end
attempt = attempt + 1
-- Moving a queued task from its pool to a push agent is no failure: it costs no attempt.
if ARGV[2] == 'unpooled' or free then redis.call('HINCRBY', KEYS[1], 'budget_from', 1) end
redis.call('HSET', KEYS[1], 'status', 'retry_wait', 'attempt', attempt, 'due_at', due,
  'received_at', 0, 'sent_at', 0, 'tl', 1)
entries[#entries + 1] = '{"stage":"retried","at":' .. now .. ',"attempt":' .. attempt .. ',"reason":' .. cjson.encode(ARGV[2]) .. ',"due_at":' .. due .. from .. '}'
redis.call('RPUSH', KEYS[2], unpack(entries))
return { 1, attempt, cur[3], cur[4], due, cur[7] or '' }
