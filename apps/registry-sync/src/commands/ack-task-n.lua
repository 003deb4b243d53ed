--[[
  Applies an ack to the task's state and timeline when it comes from the agent, epoch and
  attempt the task is assigned to. A stage arriving twice, or after the task is final, changes
  nothing, so re-processing an ack after a crash is safe. A failure is recorded here; whether it
  is retried or dead-lettered is the retry script's decision. A task waiting in a capability
  pool is taken by the first pull agent that reports it and may take it: of the task's region
  when its region_policy is strict, with each of its tags among the agent's tags or capabilities
  (what packages/protocol placement.ts decides for workers). Constraints that cannot be read
  let nobody take it.

  The ordinary stages are fields of the task hash (task/timeline.ts in packages/dispatch builds
  the timeline from them): a receipt writes received_at, a completion completed_at, and the first
  ack of an attempt copies its sent_at and message_id from the agent's pending entry. Only a
  failure, an exceptional stage, is a timeline list entry.

  One call applies every ack of a batch whose task is in one task shard (their keys share the
  shard's hash tag, keys.ts `taskShardTag`), in order, each as if applied alone.

  A completion while archiving is on ("1" in archive) appends the task_id to the shard's archive
  outbox and leaves the payload and the expiry to the archiver, which sets both once the task's
  record is in InfluxDB (registry-sync archive/), so the record cannot expire unarchived.

  KEYS[1] outbox: the task shard's archive outbox stream (keys.ts archiveOutbox)
  KEYS[2..] tasks: per ack its task hash, then the task's timeline list
  ARGV[1] retentionS: retention seconds once final
  ARGV[2] archive: "1" to archive final tasks, "" not to
  ARGV[3..] acks, per ack: stage, attempt (0 = current), agentId, epoch, at (at_ms, Redis time of
  the ack), result (JSON text, completed), error (failed), durationMs (duration_ms or ""),
  failureEntry (the failure's timeline entry as JSON, "" for other stages), foldedReceivedAt
  (received_at ms of a receipt the worker folded into this completion or failure, or ""),
  sentAt (sent_at ms of the attempt, the agent's pending entry, or ""), messageId (its
  message_id), placed ("1" when the agent's placement follows: an ack that may take a pooled
  task, else ""), region (the agent's region), tags (the agent's tags, JSON array),
  capabilities (the agent's capabilities, JSON array)

  Output: per ack nine slots: 0, capability, callback_topic, trace_id, received_at_ms, sent_at_ms,
  attempt, final (0|1), 1 when a folded receipt was recorded here — or a refusal in the first
  slot, "" and 0 filling the others: -1 no such task, -6 not the current assignment (other
  agent, epoch or attempt), -7 stage already applied or task final (a cancelled task's
  completion or failure records its `stopped` entry first), -10 a pooled task this agent may not
  take, 1 a pooled task not recorded as sent yet (to be applied again shortly)
]]
--#include is-final

local retentionS = ARGV[1]
local archive = ARGV[2] == '1'

-- Whether the agent of ack A may take the pooled task (A's placed, region, tags, capabilities).
local function mayTake(task, A)
  if A[13] ~= '1' then return true end
  local c = redis.call('HMGET', task, 'tags', 'region', 'region_policy')
  if c[2] and c[2] ~= '' and c[3] == 'strict' and c[2] ~= A[14] then return false end
  if not c[1] or c[1] == '' or c[1] == '[]' then return true end
  local ok, wanted = pcall(cjson.decode, c[1])
  if not ok or type(wanted) ~= 'table' then return false end
  local offered = {}
  for _, list in ipairs({ A[15], A[16] }) do
    local fine, items = pcall(cjson.decode, list)
    if fine and type(items) == 'table' then
      for _, item in ipairs(items) do offered[item] = true end
    end
  end
  for _, tag in ipairs(wanted) do
    if not offered[tag] then return false end
  end
  return true
end

-- One ack A (its 16 fields) to the task hash `task` and its timeline `tl`: its reply's slots.
local function step(task, tl, A)
  local cur = redis.call('HMGET', task, 'status', 'attempt', 'agent_id', 'epoch',
    'capability', 'callback_topic', 'trace_id', 'received_at', 'sent_at', 'tl')
  if not cur[1] then return { -1 } end
  local attempt = tonumber(cur[2])
  if cur[3] == '' and cur[1] == 'accepted' and A[13] == '1' and (A[2] == '0' or tonumber(A[2]) == attempt) then
    -- A pull agent read the pool entry before the router recorded it (record-pooled-1.lua runs once
    -- the XADD answered): refused now, the ack would leave the task in the pool for good. This reply
    -- makes registry-sync apply the ack again shortly, by then against a 'sent' task.
    return { 1 }
  end
  if cur[3] == '' and cur[1] == 'sent' and (A[2] == '0' or tonumber(A[2]) == attempt) then
    -- A pooled task: the first pull agent to report it takes it, if it may.
    if not mayTake(task, A) then return { -10 } end
    redis.call('HSET', task, 'agent_id', A[3], 'epoch', A[4])
    cur[3] = A[3]
    cur[4] = A[4]
  end
  if (A[2] ~= '0' and tonumber(A[2]) ~= attempt) or cur[3] ~= A[3] or tonumber(cur[4]) ~= tonumber(A[4]) then
    return { -6 }
  end
  local status = cur[1]
  local final = is_final(status)
  if status == 'cancelled' and A[1] ~= 'received' then
    -- The agent running a cancelled task stopped (or finished): its result is refused, and the
    -- timeline shows when its slot freed, once.
    if redis.call('HSETNX', task, 'stopped_at', A[5]) == 1 then
      redis.call('RPUSH', tl, cjson.encode({
        stage = 'stopped', at = tonumber(A[5]), agent_id = A[3], attempt = attempt,
      }))
    end
    return { -7 }
  end
  local receivedAt = tonumber(cur[8]) or 0
  local sentAt = tonumber(cur[9]) or 0
  -- One HSET for everything this ack records.
  local fields = {}
  if sentAt == 0 and A[11] ~= '' then
    -- The attempt's first ack: its sent stage comes from the delivery's pending entry.
    sentAt = tonumber(A[11])
    fields[#fields + 1] = 'sent_at'
    fields[#fields + 1] = A[11]
    fields[#fields + 1] = 'message_id'
    fields[#fields + 1] = A[12]
  end
  local out = { 0, cur[5], cur[6], cur[7], receivedAt, sentAt, attempt, 0, 0 }

  if A[1] == 'received' then
    if receivedAt > 0 or final then return { -7 } end
    out[5] = tonumber(A[5])
    if status == 'accepted' or status == 'sent' then
      redis.call('HSET', task, 'received_at', A[5], 'status', 'received', unpack(fields))
    else
      redis.call('HSET', task, 'received_at', A[5], unpack(fields))
    end
    return out
  end

  if final or status == 'failed' then return { -7 } end
  if A[10] ~= '' and receivedAt == 0 then
    -- The worker ended the task before its receipt went out: both stages come from this ack.
    receivedAt = tonumber(A[10])
    out[5] = receivedAt
    out[9] = 1
    fields[#fields + 1] = 'received_at'
    fields[#fields + 1] = A[10]
  end
  if A[8] ~= '' then
    fields[#fields + 1] = 'duration_ms'
    fields[#fields + 1] = A[8]
  end
  if A[1] == 'failed' then
    redis.call('RPUSH', tl, A[9])
    redis.call('HSET', task, 'status', 'failed', 'error', A[7], 'tl', 1, unpack(fields))
    return out
  end
  out[8] = 1
  if archive then
    -- The archiver empties the payload and sets the expiry once the record is archived.
    redis.call('HSET', task, 'status', 'completed', 'result', A[6], 'completed_at', A[5],
      'nonce', '', unpack(fields))
    redis.call('XADD', KEYS[1], '*', 't', string.sub(task, string.find(task, '}:h:', 1, true) + 4))
    return out
  end
  -- Final: the payload and the nonce are no longer needed (emptied in the same HSET).
  redis.call('HSET', task, 'status', 'completed', 'result', A[6], 'completed_at', A[5],
    'payload', '', 'nonce', '', unpack(fields))
  redis.call('EXPIRE', task, retentionS)
  if cur[10] then redis.call('EXPIRE', tl, retentionS) end
  return out
end

local FIELDS = 16
local PAD = { '', '', '', 0, 0, 0, 0, 0 }
local res = {}
local k = 2
for a = 3, #ARGV, FIELDS do
  local r = step(KEYS[k], KEYS[k + 1], { unpack(ARGV, a, a + FIELDS - 1) })
  k = k + 2
  res[#res + 1] = r[1]
  for i = 2, 9 do
    if #r == 1 then res[#res + 1] = PAD[i - 1] else res[#res + 1] = r[i] end
  end
end
return res
