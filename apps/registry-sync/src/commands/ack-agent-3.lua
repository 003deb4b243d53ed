--[[
  The agent's side of a worker's ack. Refuses an instance that no longer holds the agent's epoch
  (fencing: Redis' own XACK checks no owner, so the check lives here). A receipt marks the
  pending entry received and clears a consumption suspicion; a completion or failure releases
  the agent's slot (the pending entry) and deletes the finished inbox entry. An entry delivered
  under an older epoch is left alone even when a newer instance acks it (it read what the old
  instance left unread): the task is assigned to the old epoch, so the task refuses the ack, and
  the sweeper must still find the entry to take the task back. A pull agent's receipt of a task
  read from a capability pool creates its pending entry (marked `pool=<capability>`), so its
  slot and the task are tracked like a pushed one. A completion that names its capability and
  duration and releases the slot also updates the agent's execution-time EWMA for that capability
  and its slow streak (what slow-1.lua does for acks without a capability). Running it twice for
  the same ack is harmless. One call applies every ack of a batch for the agent, in order, each as
  if applied alone.

  KEYS[1] agent record hash   KEYS[2] agent pending hash   KEYS[3] agent inbox stream
  ARGV: 12 per ack, the n-th ack's k-th at ARGV[12 (n - 1) + k]:
  ARGV[1] stage (received|completed|failed)   ARGV[2] task_id   ARGV[3] epoch
  ARGV[4] attempt (0 = whichever was delivered)   ARGV[5] ack time ms
  ARGV[6] pool capability or ""   ARGV[7] pool entry id or ""
  ARGV[8] capability or "" (completions)   ARGV[9] duration ms or ""   ARGV[10] slow threshold ms
  ARGV[11] EWMA weight of the new sample
  ARGV[12] "1" when a completion or failure stands for its receipt too (the worker folded it)

  Pending entry: attempt|entry id|sent_at|deadline_ms|received_at|epoch, then |pool=<capability>
  (a pull agent's pool task) or |probe (a liveness probe, marked by deliver-3.lua); a receipt
  keeps the marks.

  Output: per ack, { 0, sent_at_ms or 0, pool entry id to delete or "", 1 when the speed was
  recorded here, 1 when the entry was a probe's, the delivery's entry id or "" (with sent_at, the
  attempt's sent stage for the task step) } — with the agent's region, tags (JSON array)
  and capabilities (JSON array) appended when the ack may take a pooled task (it names a pool,
  or the agent holds no entry for it), for the task step to check the task's constraints — or an
  error: { -5 } no such agent, { -2 } stale epoch (while the attempt still holds its slot)
]]
local ARGS_PER_ACK = 12

-- The agent record, read once for the batch and kept up to date with what the acks write.
local rec = redis.call('HMGET', KEYS[1], 'epoch', 'zombie', 'status', 'slow_streak', 'region', 'tags', 'capabilities')
local speeds = {}
-- Inbox entries of finished tasks, deleted together at the end.
local finished = {}

-- The reply of one applied ack; `placed`: the ack may take a pooled task, so the agent's
-- placement goes with it.
local function reply(sentAt, poolEntry, tracked, probe, placed, entryId)
  local out = { 0, sentAt, poolEntry, tracked, probe and 1 or 0, entryId or '' }
  if placed then
    out[7] = rec[5] or ''
    out[8] = rec[6] or '[]'
    out[9] = rec[7] or '[]'
  end
  return out
end

local function apply(A)
  if not rec[1] then return { -5 } end
  if tonumber(rec[1]) ~= tonumber(A[3]) then
    -- A completion or failure whose slot is already free is the replay of an ack this script
    -- applied before the task step failed (a crash or an outage in between): the task's own
    -- check (agent, epoch, attempt) decides, so a newer instance registering meanwhile cannot
    -- strand the task. A task taken back has a new attempt there and refuses it.
    if A[1] ~= 'received' and not redis.call('HGET', KEYS[2], A[2]) then return reply(0, '', 0, false, true) end
    return { -2 }
  end
  if (A[1] == 'received' or A[12] == '1') and rec[2] then
    -- The task loop is consuming again: the agent is no zombie.
    redis.call('HDEL', KEYS[1], 'zombie')
    rec[2] = false
    if rec[3] == 'SUSPECT' then
      redis.call('HSET', KEYS[1], 'status', 'HEALTHY')
      rec[3] = 'HEALTHY'
    end
  end
  local p = redis.call('HGET', KEYS[2], A[2])
  local pooled = A[6] ~= ''
  if not p then
    if pooled and A[1] == 'received' then
      redis.call('HSET', KEYS[2], A[2], table.concat({ A[4], A[7], A[5], 0, A[5], A[3] }, '|') .. '|pool=' .. A[6])
      return reply(0, '', 0, false, true)
    end
    if pooled then return reply(0, A[7], 0, false, true) end
    return reply(0, '', 0, false, true)
  end
  local attempt, msgId, sentAt, deadline, receivedAt, epoch, marks = string.match(p, '^(%d+)|([^|]*)|(%d+)|(%d+)|(%d+)|(%d+)(.*)$')
  if not attempt then return reply(0, '', 0, false, pooled) end
  local pool = nil
  local probe = false
  for mark in string.gmatch(marks, '|([^|]+)') do
    if mark == 'probe' then probe = true
    elseif string.sub(mark, 1, 5) == 'pool=' then pool = string.sub(mark, 6) end
  end
  if A[4] ~= '0' and A[4] ~= attempt then return reply(0, '', 0, false, pooled) end
  if tonumber(epoch) ~= tonumber(A[3]) then return reply(0, '', 0, false, pooled) end
  if A[1] == 'received' then
    if receivedAt == '0' then
      redis.call('HSET', KEYS[2], A[2], table.concat({ attempt, msgId, sentAt, deadline, A[5], epoch }, '|') .. marks)
    end
    return reply(tonumber(sentAt), '', 0, probe, pooled, msgId)
  end
  redis.call('HDEL', KEYS[2], A[2])
  local tracked = 0
  -- A probe's speed says nothing of the agent's work (and would reset its slow streak).
  if A[1] == 'completed' and A[8] ~= '' and A[9] ~= '' and not probe then
    local speedField = 'ewma:' .. A[8]
    if speeds[speedField] == nil then speeds[speedField] = redis.call('HGET', KEYS[1], speedField) end
    local d = tonumber(A[9])
    local alpha = tonumber(A[11])
    local prev = tonumber(speeds[speedField])
    local speed = d
    if prev then speed = alpha * d + (1 - alpha) * prev end
    local streak = 0
    if d > tonumber(A[10]) then streak = (tonumber(rec[4]) or 0) + 1 end
    speeds[speedField] = string.format('%.1f', speed)
    rec[4] = streak
    redis.call('HSET', KEYS[1], speedField, speeds[speedField], 'slow_streak', streak)
    tracked = 1
  end
  if pool then return reply(tonumber(sentAt), msgId, tracked, probe, pooled, msgId) end
  if msgId ~= '' then finished[#finished + 1] = msgId end
  return reply(tonumber(sentAt), '', tracked, probe, pooled, msgId)
end

local out = {}
for base = 0, #ARGV - 1, ARGS_PER_ACK do
  out[#out + 1] = apply({ unpack(ARGV, base + 1, base + ARGS_PER_ACK) })
end
if #finished > 0 then redis.call('XDEL', KEYS[3], unpack(finished)) end
return out
