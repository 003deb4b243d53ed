--[[
  Records a running task's progress value or output chunks (a `progress` or `chunk` ack) in the
  task's events stream, when the ack comes from the agent, epoch and attempt the task is assigned
  to and the task is still running. One entry per value or chunk. The task hash counts what was
  kept (`out_n` entries, `out_bytes` bytes); past maxEntries entries or maxBytes bytes the rest is
  dropped, one `truncated` entry says so, and nothing more is kept for the task (the task itself
  goes on). The timeline gets a `streaming` entry with the task's first output and a `truncated`
  entry at the bound: one each per task, so a chatty task does not grow its timeline. The events
  stream expires retentionS seconds after the task's deadline (or after this write, without one),
  so it is kept as long as the task. An ack applied again (a crash before XACK) is known by its
  entry id (`out_ack`) and changes nothing.

  KEYS[1] task: the task hash   KEYS[2] timeline: the task's timeline list
  KEYS[3] events: the task's events stream
  ARGV[1] stage: progress | chunk   ARGV[2] attempt: 0 = current   ARGV[3] agentId
  ARGV[4] epoch   ARGV[5] at: at_ms, Redis time of the ack   ARGV[6] maxEntries
  ARGV[7] maxBytes   ARGV[8] retentionS: retention seconds   ARGV[9] ackEntryId: the ack's entry id
  ARGV[10..] outputs, one per value or chunk: data

  Output: { 0, kept, truncated now (0|1), first output (0|1), callback_topic when the task was
            submitted with stream: true else '', capability, attempt, received_at_ms }
  Errors: -1 no such task, -6 not the current assignment (other agent, epoch or attempt),
          -7 the task is not running (final, failed, waiting) or the ack was applied already
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'agent_id', 'epoch',
  'callback_topic', 'stream_out', 'out_n', 'out_bytes', 'out_cut', 'deadline_ms', 'capability',
  'received_at', 'out_ack', 'stream')
if not cur[1] then return { -1 } end
local attempt = tonumber(cur[2])
if (ARGV[2] ~= '0' and tonumber(ARGV[2]) ~= attempt) or cur[3] ~= ARGV[3]
  or tonumber(cur[4]) ~= tonumber(ARGV[4]) then
  return { -6 }
end
local status = cur[1]
if status ~= 'accepted' and status ~= 'sent' and status ~= 'received' then return { -7 } end

-- Entry ids `<ms>-<seq>` of the same attempt's acks only grow.
local function newer(id, than)
  local a, b = string.match(id, '^(%d+)-(%d+)$')
  local c, d = string.match(than, '^(%d+)-(%d+)$')
  if not c then return true end
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  return a > c or (a == c and b > d)
end
local last = cur[13]
local mark = attempt .. ':' .. ARGV[9]
if last then
  local lastAttempt, lastId = string.match(last, '^(%d+):(.+)$')
  if tonumber(lastAttempt) == attempt and not newer(ARGV[9], lastId) then return { -7 } end
end

local n = tonumber(cur[7]) or 0
local bytes = tonumber(cur[8]) or 0
if cur[9] == '1' then
  redis.call('HSET', KEYS[1], 'out_ack', mark)
  return { 0, 0, 0, 0, '', cur[11] or '', attempt, tonumber(cur[12]) or 0 }
end
local maxN = tonumber(ARGV[6])
local maxBytes = tonumber(ARGV[7])
local first = n == 0
local kept = 0
local cut = 0
local fields = { 'out_ack', mark }
for i = 10, #ARGV do
  local data = ARGV[i]
  if n + 1 > maxN or bytes + #data > maxBytes then
    cut = 1
    redis.call('XADD', KEYS[3], '*', 'kind', 'truncated', 'at', ARGV[5], 'attempt', attempt,
      'data', cjson.encode({ chunks = n, bytes = bytes }))
    redis.call('RPUSH', KEYS[2], cjson.encode({
      stage = 'truncated', at = tonumber(ARGV[5]), agent_id = ARGV[3], attempt = attempt,
      reason = 'kept ' .. n .. ' entries, ' .. bytes .. ' bytes; later output dropped',
    }))
    fields[#fields + 1] = 'out_cut'
    fields[#fields + 1] = '1'
    break
  end
  n = n + 1
  bytes = bytes + #data
  kept = kept + 1
  redis.call('XADD', KEYS[3], '*', 'kind', ARGV[1], 'at', ARGV[5], 'attempt', attempt, 'data', data)
end
if first and kept > 0 then
  redis.call('RPUSH', KEYS[2], cjson.encode({
    stage = 'streaming', at = tonumber(ARGV[5]), agent_id = ARGV[3], attempt = attempt,
  }))
end
if cut == 1 or (first and kept > 0) then
  -- The task's final step expires the timeline list only when the task says it has one.
  fields[#fields + 1] = 'tl'
  fields[#fields + 1] = '1'
end
fields[#fields + 1] = 'out_n'
fields[#fields + 1] = n
fields[#fields + 1] = 'out_bytes'
fields[#fields + 1] = bytes
redis.call('HSET', KEYS[1], unpack(fields))
local ttl = tonumber(ARGV[8])
local deadline = tonumber(cur[10]) or 0
if deadline > tonumber(ARGV[5]) then ttl = ttl + math.ceil((deadline - tonumber(ARGV[5])) / 1000) end
if kept > 0 or cut == 1 then redis.call('EXPIRE', KEYS[3], ttl) end
local topic = ''
-- `stream` = '1': a task stored before `stream_out` (`stream` is now a pooled task's pool key).
if (cur[6] == '1' or cur[14] == '1') and cur[5] then topic = cur[5] end
local out = { 0, kept, cut, 0, topic, cur[11] or '', attempt, tonumber(cur[12]) or 0 }
if first and kept > 0 then out[4] = 1 end
return out
