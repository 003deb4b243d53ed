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
  the same ack is harmless.

  One call applies every ack of a batch for the agent, in order, each as if applied alone: the
  agent record (with the EWMAs the batch needs) and the acks' pending entries are read once, and
  what the batch changes is written once at the end — the pending entries in one HSET and one
  HDEL, the EWMAs and slow streak in one HSET, the finished inbox entries in one XDEL.

  KEYS[1] agent: the agent record hash   KEYS[2] pending: the agent's pending hash
  KEYS[3] inbox: the agent's inbox stream
  ARGV[1..] acks, 12 per ack, the n-th ack's k-th at ARGV[12 (n - 1) + k]:
    stage (received|completed|failed)   taskId   epoch
    attempt (0 = whichever was delivered)   ackAt: the ack's time ms
    pool: the pool capability or ""   poolEntry: the pool entry id or ""
    capability or "" (completions)   durationMs: duration ms or ""   slowMs: slow threshold ms
    ewmaWeight: EWMA weight of the new sample
    folded: "1" when a completion or failure stands for its receipt too (the worker folded it)

  Pending entry (deliver-3.lua): attempt|epoch|mark|entry id|received_at|deadline_ms, the mark ""
  or "probe" or "shadow" or "pool=<capability>"; an ack compares its own "attempt|epoch|" with the entry's
  start, so nothing is parsed as a number. A receipt keeps the mark.

  Output: the agent's region, tags (JSON array) and capabilities (JSON array) — for the task step
  to check a pooled task's constraints — then six slots per ack: 0, the delivery's entry id or ""
  (its time is the attempt's sent stage), the pool entry id to delete or "", 1 when the speed was
  recorded here, the entry's kind (0 a caller's task, 1 a probe, 2 a shadow copy), 1 when the ack may take a pooled task (it names
  a pool, or the agent holds no entry for it: the placement applies); or a refusal, -5 no such
  agent or -2 stale epoch (while the attempt still holds its slot), and "", "", 0, 0, 0
]]
local ARGS_PER_ACK = 12

-- The agent record and the EWMAs of the capabilities the batch's completions name, in one read.
local fields = { 'epoch', 'zombie', 'status', 'slow_streak', 'region', 'tags', 'capabilities' }
local speedAt = {}
for base = 0, #ARGV - 1, ARGS_PER_ACK do
  local cap = ARGV[base + 8]
  if cap ~= '' and not speedAt[cap] then
    fields[#fields + 1] = 'ewma:' .. cap
    speedAt[cap] = #fields
  end
end
local rec = redis.call('HMGET', KEYS[1], unpack(fields))
local out = { rec[5] or '', rec[6] or '[]', rec[7] or '[]' }
if not rec[1] then
  for _ = 1, #ARGV, ARGS_PER_ACK do
    for _, v in ipairs({ -5, '', '', 0, 0, 0 }) do out[#out + 1] = v end
  end
  return out
end

-- The acks' pending entries, read once and kept up to date as the acks apply.
local ids = {}
for base = 0, #ARGV - 1, ARGS_PER_ACK do ids[#ids + 1] = ARGV[base + 2] end
local found = redis.call('HMGET', KEYS[2], unpack(ids))
local pending = {}
local changed = {}
for i = 1, #ids do
  if pending[ids[i]] == nil then pending[ids[i]] = found[i] end
end
local speeds = {}
local streak = nil
local finished = {}
local consuming = false

-- `kind`: 0 a caller's task, 1 a probe, 2 a shadow copy (the pending entry's mark).
local function reply(code, entryId, poolEntry, tracked, kind, placed)
  out[#out + 1] = code
  out[#out + 1] = entryId
  out[#out + 1] = poolEntry
  out[#out + 1] = tracked
  out[#out + 1] = kind or 0
  out[#out + 1] = placed and 1 or 0
end

local function apply(base)
  local stage, taskId, epoch, attempt = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4]
  local pooled = ARGV[base + 6] ~= ''
  local p = pending[taskId]
  if rec[1] ~= epoch then
    -- A completion or failure whose slot is already free is the replay of an ack this script
    -- applied before the task step failed (a crash or an outage in between): the task's own
    -- check (agent, epoch, attempt) decides, so a newer instance registering meanwhile cannot
    -- strand the task. A task taken back has a new attempt there and refuses it.
    if stage ~= 'received' and not p then return reply(0, '', '', 0, 0, true) end
    return reply(-2, '', '', 0, 0, false)
  end
  if stage == 'received' or ARGV[base + 12] == '1' then consuming = true end
  if not p then
    if pooled and stage == 'received' then
      pending[taskId] = attempt .. '|' .. epoch .. '|pool=' .. ARGV[base + 6] .. '|' .. ARGV[base + 7] .. '|' .. ARGV[base + 5] .. '|0'
      changed[taskId] = true
      return reply(0, '', '', 0, 0, true)
    end
    if pooled then return reply(0, '', ARGV[base + 7], 0, 0, true) end
    return reply(0, '', '', 0, 0, true)
  end
  -- attempt|epoch|mark|entry id|received_at|deadline_ms
  local prefix = attempt .. '|' .. epoch .. '|'
  if attempt == '0' then
    -- A worker that gave no attempt means whichever was delivered (of its epoch).
    local a = string.match(p, '^(%d+)|')
    if a then prefix = a .. '|' .. epoch .. '|' end
  end
  if string.sub(p, 1, #prefix) ~= prefix then return reply(0, '', '', 0, 0, pooled) end
  local markEnd = string.find(p, '|', #prefix + 1, true)
  local idEnd = markEnd and string.find(p, '|', markEnd + 1, true)
  if not idEnd then return reply(0, '', '', 0, 0, pooled) end
  local mark = string.sub(p, #prefix + 1, markEnd - 1)
  local entryId = string.sub(p, markEnd + 1, idEnd - 1)
  local kind = 0
  if mark == 'probe' then kind = 1 elseif mark == 'shadow' then kind = 2 end
  if stage == 'received' then
    if string.sub(p, idEnd + 1, idEnd + 2) == '0|' then
      pending[taskId] = string.sub(p, 1, idEnd) .. ARGV[base + 5] .. string.sub(p, idEnd + 2)
      changed[taskId] = true
    end
    return reply(0, entryId, '', 0, kind, pooled)
  end
  pending[taskId] = false
  changed[taskId] = true
  local tracked = 0
  -- A probe's speed says nothing of the agent's work (and would reset its slow streak); a shadow
  -- copy's is kept with its record, apart from the capability's speed.
  local cap = ARGV[base + 8]
  if stage == 'completed' and cap ~= '' and ARGV[base + 9] ~= '' and kind == 0 then
    local field = 'ewma:' .. cap
    local d = tonumber(ARGV[base + 9])
    local alpha = tonumber(ARGV[base + 11])
    local prev = speeds[field] or tonumber(rec[speedAt[cap]])
    local speed = d
    if prev then speed = alpha * d + (1 - alpha) * prev end
    speeds[field] = speed
    streak = 0
    if d > tonumber(ARGV[base + 10]) then streak = (tonumber(rec[4]) or 0) + 1 end
    rec[4] = streak
    tracked = 1
  end
  if string.sub(mark, 1, 5) == 'pool=' then return reply(0, entryId, entryId, tracked, kind, pooled) end
  if entryId ~= '' then finished[#finished + 1] = entryId end
  return reply(0, entryId, '', tracked, kind, pooled)
end

for base = 0, #ARGV - 1, ARGS_PER_ACK do apply(base) end

-- What the batch changed, written once.
if consuming and rec[2] then
  -- The task loop is consuming again: the agent is no zombie.
  redis.call('HDEL', KEYS[1], 'zombie')
  -- Unless failed deep probes (`unwell`) or an unreachable endpoint (`unreachable`) keep it
  -- SUSPECT; a DEGRADED one goes back to DEGRADED.
  if rec[3] == 'SUSPECT' and redis.call('HEXISTS', KEYS[1], 'unwell') == 0
    and redis.call('HEXISTS', KEYS[1], 'unreachable') == 0 then
    local back = 'HEALTHY'
    if redis.call('HEXISTS', KEYS[1], 'degraded') == 1 then back = 'DEGRADED' end
    redis.call('HSET', KEYS[1], 'status', back)
  end
end
local writes, drops = {}, {}
for taskId in pairs(changed) do
  local v = pending[taskId]
  if v then
    writes[#writes + 1] = taskId
    writes[#writes + 1] = v
  else
    drops[#drops + 1] = taskId
  end
end
if #writes > 0 then redis.call('HSET', KEYS[2], unpack(writes)) end
if #drops > 0 then redis.call('HDEL', KEYS[2], unpack(drops)) end
if streak ~= nil then
  local update = { 'slow_streak', streak }
  for field, speed in pairs(speeds) do
    update[#update + 1] = field
    update[#update + 1] = string.format('%.1f', speed)
  end
  redis.call('HSET', KEYS[1], unpack(update))
end
if #finished > 0 then redis.call('XDEL', KEYS[3], unpack(finished)) end
return out
