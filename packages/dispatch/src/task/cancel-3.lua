--[[
  Cancels a task: final for its caller at once (status `cancelled`, a timeline entry naming who
  cancelled it and when). What was running or waiting for it is cleared by the caller of this
  script from the reply: the due entry, the pool entry, the agent's control notice, the callback.
  Cancelling a cancelled task again changes nothing here and answers as the first cancel did, so
  that follow-up can be done again (it is idempotent) should the first one have failed midway.

  While archiving is on ("1" in archive) a cancel appends the task_id to the shard's archive
  outbox and leaves the payload and the expiry to the archiver, which sets both once the task's
  record is in InfluxDB.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  KEYS[3] outbox: the task shard's archive outbox stream (keys.ts archiveOutbox)
  ARGV[1] now: ms (Redis time as the router reads it)   ARGV[2] by: who cancelled (key id)
  ARGV[3] retentionS: retention seconds once final
  ARGV[4] mode: "resume" to only answer for a task cancelled already (registry-sync's
          follow-up), never cancel one; "" to cancel
  ARGV[5] archive: "1" to archive the cancelled task, "" not to

  Output: { 0 cancelled now | 1 cancelled before, status before the cancel, agent_id, attempt,
            epoch, callback_topic, capability, message_id, stream, received_at, trace_id,
            cancelled_at, cancelled_by }
  Errors: -1 unknown_task (no such task), -7 already_final (completed or dead: ALREADY_FINAL),
          -13 not_cancelled (with "resume")
]]
--#include is-final
local cur = redis.call('HMGET', KEYS[1], 'status', 'agent_id', 'attempt', 'epoch',
  'callback_topic', 'capability', 'message_id', 'stream', 'received_at', 'trace_id',
  'cancelled_from', 'cancelled_at', 'cancelled_by')
if not cur[1] then return { -1 } end
local code, before, at, by = 0, cur[1], ARGV[1], ARGV[2]
if cur[1] == 'cancelled' then
  code = 1
  -- A task cancelled before `cancelled_from` was kept: nothing known of what held it.
  before, at, by = cur[11] or 'cancelled', cur[12] or ARGV[1], cur[13] or ARGV[2]
elseif is_final(cur[1]) then
  return { -7 }
elseif ARGV[4] == 'resume' then
  return { -13 }
else
  redis.call('RPUSH', KEYS[2], cjson.encode({
    stage = 'cancelled', at = tonumber(ARGV[1]), by = ARGV[2],
    agent_id = cur[2] ~= '' and cur[2] or nil, attempt = tonumber(cur[3]),
  }))
  if ARGV[5] == '1' then
    redis.call('HSET', KEYS[1], 'status', 'cancelled', 'cancelled_at', ARGV[1], 'cancelled_by', ARGV[2],
      'cancelled_from', cur[1], 'nonce', '', 'tl', 1)
    redis.call('XADD', KEYS[3], '*', 't', string.sub(KEYS[1], string.find(KEYS[1], '}:h:', 1, true) + 4))
  else
    -- The payload and the nonce are no longer needed.
    redis.call('HSET', KEYS[1], 'status', 'cancelled', 'cancelled_at', ARGV[1], 'cancelled_by', ARGV[2],
      'cancelled_from', cur[1], 'payload', '', 'nonce', '', 'tl', 1)
    redis.call('EXPIRE', KEYS[1], ARGV[3])
    redis.call('EXPIRE', KEYS[2], ARGV[3])
  end
end
return { code, before, cur[2] or '', tonumber(cur[3]) or 0, tonumber(cur[4]) or 0, cur[5] or '',
  cur[6] or '', cur[7] or '', cur[8] or '', tonumber(cur[9]) or 0, cur[10] or '',
  tonumber(at) or 0, by }
