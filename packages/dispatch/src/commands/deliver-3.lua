--[[
  Re-verifies the chosen agent and delivers tasks to its inbox in the same step: the agent must
  still hold the epoch the router saw, be HEALTHY, SUSPECT or DEGRADED, not be ejected, not be
  marked down with a shared dependency (`dependency_down`: probes and shadow copies only), have a lease
  younger than the delivery bound on Redis server time, and have a free slot. The status is what
  registry-sync's sweeper last wrote; the delivery bound (REACH_DELIVERY_LEASE_MS, far longer than
  the OFFLINE bound) is what stops deliveries once no registry-sync has renewed leases for that
  long (docs/RELIABILITY.md, Without registry-sync). The slots taken are `slots_taken` (the
  smaller of the pending hash and the inbox entries not XACKed), so a slot frees when the worker
  XACKs, whether or not registry-sync has applied the ack yet. The same task
  attempt delivered twice (a re-sent command) returns the first delivery. One call delivers
  every task of a tick for the agent, in order, each checked as if delivered alone; the agent's
  record, its inflight count and its pending entries are read once, and the new pending entries
  written once, for the whole call.

  KEYS[1] agent: the agent record hash   KEYS[2] inbox: its inbox stream
  KEYS[3] pending: its pending hash
  ARGV[1] leaseBoundMs: the delivery bound
  ARGV[2..] tasks, per task: epoch, taskId, attempt, deadlineMs (0 = none), mark ("" for a
  caller's task, "probe" for a probe, "shadow" for a shadow copy: an agent in observation mode
  takes probes and shadow copies only, and only such an agent takes a shadow copy), then its
  entry: how many task entry fields and values follow, then those

  Pending entry (keys.ts `pending()`): attempt|epoch|mark|entry id|received_at|deadline_ms, with
  received_at 0 until the receipt and mark "" — or "probe" for a probe, "shadow" for a shadow
  copy: registry-sync tells probes and shadow copies from callers' tasks by this mark alone (a
  caller chooses its task_id, never this hash). The delivery time is the entry id's.

  An endpoint agent's record has `relay` = 1 (docs/ENDPOINTS.md): a call that delivers to it
  also SPUBLISHes its wake channel (`<agent key>:wake`, the same hash tag), so its relay reads the
  inbox at once instead of polling.

  Output: Redis time now (ms), then per task three slots: 0 delivered | 1 already delivered, its
  entry id, the inflight count after it — or a refusal: -5 unknown_agent (the agent is gone),
  -2 stale_epoch (its epoch changed), -12 not_live (status, lease or ejected), -4 full (no free
  slot, with the inflight count), "" and 0 filling the slots it leaves empty
]]
--#include slots-taken
local rec = redis.call('HMGET', KEYS[1], 'epoch', 'status', 'max_concurrency', 'lease_at', 'ejected_until', 'observe', 'relay', 'dependency_down')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = rec[1] and (rec[2] == 'HEALTHY' or rec[2] == 'SUSPECT' or rec[2] == 'DEGRADED') and now - tonumber(rec[4]) < tonumber(ARGV[1])
  and (tonumber(rec[5]) or 0) <= now
local out = { now }
if not rec[1] or not live then
  -- Nothing is delivered: every task gets the agent's refusal, without reading further.
  local a = 2
  while a <= #ARGV do
    local code = -12
    if not rec[1] then code = -5 elseif tonumber(rec[1]) ~= tonumber(ARGV[a]) then code = -2 end
    out[#out + 1] = code
    out[#out + 1] = ''
    out[#out + 1] = 0
    a = a + 6 + tonumber(ARGV[a + 5])
  end
  return out
end

-- The pending entries of the call's tasks, read once and kept up to date as tasks are delivered.
local ids = {}
local a = 2
while a <= #ARGV do
  ids[#ids + 1] = ARGV[a + 1]
  a = a + 6 + tonumber(ARGV[a + 5])
end
local found = redis.call('HMGET', KEYS[3], unpack(ids))
local pending = {}
for i = 1, #ids do
  if pending[ids[i]] == nil then pending[ids[i]] = found[i] end
end
-- `held` follows the pending hash, `inflight` the slots taken: a new attempt of a task that still
-- has an entry replaces it in the hash, and its new inbox entry still takes a slot.
local held = redis.call('HLEN', KEYS[3])
local inflight = slots_taken(held, KEYS[2])
local max = tonumber(rec[3])
local writes = {}

a = 2
while a <= #ARGV do
  local epoch, taskId, attempt, deadline, mark = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local n = tonumber(ARGV[a + 5])
  local existing = pending[taskId]
  local prefix = attempt .. '|' .. epoch .. '|'
  if tonumber(rec[1]) ~= tonumber(epoch) then
    out[#out + 1] = -2
    out[#out + 1] = ''
    out[#out + 1] = 0
  elseif existing and string.sub(existing, 1, #prefix) == prefix then
    -- Delivered already (a re-sent command): the first delivery stands, whatever changed since.
    local markEnd = string.find(existing, '|', #prefix + 1, true)
    local idEnd = string.find(existing, '|', markEnd + 1, true)
    out[#out + 1] = 1
    out[#out + 1] = string.sub(existing, markEnd + 1, idEnd - 1)
    out[#out + 1] = inflight
  elseif (rec[6] == '1' and mark == '') or (mark == 'shadow' and rec[6] ~= '1') or (rec[8] and mark == '') then
    out[#out + 1] = -12
    out[#out + 1] = ''
    out[#out + 1] = 0
  elseif inflight >= max then
    out[#out + 1] = -4
    out[#out + 1] = ''
    out[#out + 1] = inflight
  else
    local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, a + 6, a + 5 + n))
    local value = prefix .. mark .. '|' .. id .. '|0|' .. deadline
    -- A re-delivery under a new attempt replaces the entry: the count does not grow.
    if not existing then held = held + 1 end
    inflight = math.min(held, inflight + 1)
    pending[taskId] = value
    writes[#writes + 1] = taskId
    writes[#writes + 1] = value
    out[#out + 1] = 0
    out[#out + 1] = id
    out[#out + 1] = inflight
  end
  a = a + 6 + n
end
if #writes > 0 then
  redis.call('HSET', KEYS[3], unpack(writes))
  if rec[7] == '1' then redis.call('SPUBLISH', KEYS[1] .. ':wake', '1') end
end
return out
