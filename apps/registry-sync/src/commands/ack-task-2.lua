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

  KEYS[1] task: the task hash   KEYS[2] timeline: the task's timeline list
  ARGV[1] stage   ARGV[2] attempt: 0 = current   ARGV[3] agentId   ARGV[4] epoch
  ARGV[5] at: at_ms, Redis time of the ack   ARGV[6] result: JSON text (completed)
  ARGV[7] error (failed)   ARGV[8] durationMs: duration_ms or ""
  ARGV[9] retentionS: retention seconds once final
  ARGV[10] failureEntry: the failure's timeline entry (JSON), "" for other stages
  ARGV[11] foldedReceivedAt: received_at ms of a receipt the worker folded into this completion
           or failure, or ""
  ARGV[12] sentAt: sent_at ms of the attempt (the agent's pending entry), or ""
  ARGV[13] messageId: its message_id
  ARGV[14] placed: "1" when the agent's placement follows (an ack that may take a pooled task),
           else ""
  ARGV[15] region: the agent's region   ARGV[16] tags: the agent's tags (JSON array)
  ARGV[17] capabilities: the agent's capabilities (JSON array)

  Output: { 0, capability, callback_topic, trace_id, received_at_ms, sent_at_ms, attempt, final (0|1),
            1 when a folded receipt was recorded here }
  Errors: -1 no such task, -6 not the current assignment (other agent, epoch or attempt),
          -7 stage already applied or task final (a cancelled task's completion or failure
          records its `stopped` entry first), -10 a pooled task this agent may not take;
          a TRYAGAIN error reply for a pooled task not recorded as sent yet (applied again later)
]]
--#include is-final

-- Whether the agent of this ack may take the pooled task (ARGV[14..17]).
local function mayTake()
  if ARGV[14] ~= '1' then return true end
  local c = redis.call('HMGET', KEYS[1], 'tags', 'region', 'region_policy')
  if c[2] and c[2] ~= '' and c[3] == 'strict' and c[2] ~= ARGV[15] then return false end
  if not c[1] or c[1] == '' or c[1] == '[]' then return true end
  local ok, wanted = pcall(cjson.decode, c[1])
  if not ok or type(wanted) ~= 'table' then return false end
  local offered = {}
  for _, list in ipairs({ ARGV[16], ARGV[17] }) do
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

local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'agent_id', 'epoch',
  'capability', 'callback_topic', 'trace_id', 'received_at', 'sent_at', 'tl')
if not cur[1] then return { -1 } end
local attempt = tonumber(cur[2])
if cur[3] == '' and cur[1] == 'accepted' and ARGV[14] == '1' and (ARGV[2] == '0' or tonumber(ARGV[2]) == attempt) then
  -- A pull agent read the pool entry before the router recorded it (record-pooled-1.lua runs once
  -- the XADD answered): refused now, the ack would leave the task in the pool for good. An error
  -- makes registry-sync apply the ack again shortly, by then against a 'sent' task.
  return redis.error_reply('TRYAGAIN pooled task not recorded as sent yet')
end
if cur[3] == '' and cur[1] == 'sent' and (ARGV[2] == '0' or tonumber(ARGV[2]) == attempt) then
  -- A pooled task: the first pull agent to report it takes it, if it may.
  if not mayTake() then return { -10 } end
  redis.call('HSET', KEYS[1], 'agent_id', ARGV[3], 'epoch', ARGV[4])
  cur[3] = ARGV[3]
  cur[4] = ARGV[4]
end
if (ARGV[2] ~= '0' and tonumber(ARGV[2]) ~= attempt) or cur[3] ~= ARGV[3] or tonumber(cur[4]) ~= tonumber(ARGV[4]) then
  return { -6 }
end
local status = cur[1]
local final = is_final(status)
if status == 'cancelled' and ARGV[1] ~= 'received' then
  -- The agent running a cancelled task stopped (or finished): its result is refused, and the
  -- timeline shows when its slot freed, once.
  if redis.call('HSETNX', KEYS[1], 'stopped_at', ARGV[5]) == 1 then
    redis.call('RPUSH', KEYS[2], cjson.encode({
      stage = 'stopped', at = tonumber(ARGV[5]), agent_id = ARGV[3], attempt = attempt,
    }))
  end
  return { -7 }
end
local receivedAt = tonumber(cur[8]) or 0
local sentAt = tonumber(cur[9]) or 0
-- One HSET for everything this ack records.
local fields = {}
if sentAt == 0 and ARGV[12] ~= '' then
  -- The attempt's first ack: its sent stage comes from the delivery's pending entry.
  sentAt = tonumber(ARGV[12])
  fields[#fields + 1] = 'sent_at'
  fields[#fields + 1] = ARGV[12]
  fields[#fields + 1] = 'message_id'
  fields[#fields + 1] = ARGV[13]
end
local out = { 0, cur[5], cur[6], cur[7], receivedAt, sentAt, attempt, 0, 0 }

if ARGV[1] == 'received' then
  if receivedAt > 0 or final then return { -7 } end
  out[5] = tonumber(ARGV[5])
  if status == 'accepted' or status == 'sent' then
    redis.call('HSET', KEYS[1], 'received_at', ARGV[5], 'status', 'received', unpack(fields))
  else
    redis.call('HSET', KEYS[1], 'received_at', ARGV[5], unpack(fields))
  end
  return out
end

if final or status == 'failed' then return { -7 } end
if ARGV[11] ~= '' and receivedAt == 0 then
  -- The worker ended the task before its receipt went out: both stages come from this ack.
  receivedAt = tonumber(ARGV[11])
  out[5] = receivedAt
  out[9] = 1
  fields[#fields + 1] = 'received_at'
  fields[#fields + 1] = ARGV[11]
end
if ARGV[8] ~= '' then
  fields[#fields + 1] = 'duration_ms'
  fields[#fields + 1] = ARGV[8]
end
if ARGV[1] == 'failed' then
  redis.call('RPUSH', KEYS[2], ARGV[10])
  redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[7], 'tl', 1, unpack(fields))
  return out
end
-- Final: the payload and the nonce are no longer needed (emptied in the same HSET).
redis.call('HSET', KEYS[1], 'status', 'completed', 'result', ARGV[6], 'completed_at', ARGV[5],
  'payload', '', 'nonce', '', unpack(fields))
redis.call('EXPIRE', KEYS[1], ARGV[9])
if cur[10] then redis.call('EXPIRE', KEYS[2], ARGV[9]) end
out[8] = 1
return out
