--[[
  Re-verifies the chosen agent and delivers tasks to its inbox in the same step: the agent must
  still hold the epoch the router saw, be HEALTHY or SUSPECT, not be ejected, have a lease
  younger than the offline bound on Redis server time, and have a free slot. The same task
  attempt delivered twice (a re-sent command) returns the first delivery. One call delivers
  every task of a tick for the agent, in order, each checked as if delivered alone.

  KEYS[1] agent record hash   KEYS[2] agent inbox stream   KEYS[3] agent pending hash
  ARGV[1] offline bound ms
  ARGV[2..] per task: epoch, task_id, attempt, deadline_ms (0 = none), 1 when the task is a
  probe (agents in observation mode take probes only), how many task entry fields and values
  follow, then those

  Pending entry: attempt|entry id|sent_at|deadline_ms|received_at (0 until receipt)|epoch, then
  |probe for a probe: registry-sync tells probes from callers' tasks by this mark alone (a caller
  chooses its task_id, never this hash)

  Output: per task, { 0 delivered | 1 already delivered, message_id, sent_at_ms, inflight after },
  or an error: { -1 } agent gone, { -2 } epoch changed, { -3 } not live (status, lease or
  ejected), { -4, inflight } no free slot
]]
local rec = redis.call('HMGET', KEYS[1], 'epoch', 'status', 'max_concurrency', 'lease_at', 'ejected_until', 'observe')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = rec[1] and (rec[2] == 'HEALTHY' or rec[2] == 'SUSPECT') and now - tonumber(rec[4]) < tonumber(ARGV[1])
  and (tonumber(rec[5]) or 0) <= now

-- The agent's inflight count, read once and counted on as this call delivers.
local inflight = nil

local function deliver(epoch, taskId, attempt, deadline, probe, first, last)
  if not rec[1] then return { -1 } end
  if tonumber(rec[1]) ~= tonumber(epoch) then return { -2 } end
  if not live or (rec[6] == '1' and probe ~= '1') then return { -3 } end
  local existing = redis.call('HGET', KEYS[3], taskId)
  if existing then
    local a, msgId, sentAt = string.match(existing, '^(%d+)|([^|]*)|(%d+)')
    if a == attempt then return { 1, msgId, tonumber(sentAt), redis.call('HLEN', KEYS[3]) } end
  end
  if inflight == nil then inflight = redis.call('HLEN', KEYS[3]) end
  if inflight >= tonumber(rec[3]) then return { -4, inflight } end
  local entry = { 'XADD', KEYS[2], '*' }
  for i = first, last do entry[#entry + 1] = ARGV[i] end
  local id = redis.call(unpack(entry))
  -- A re-delivery under a new attempt replaces the entry: the count does not grow.
  local pending = attempt .. '|' .. id .. '|' .. now .. '|' .. deadline .. '|0|' .. epoch
  if probe == '1' then pending = pending .. '|probe' end
  inflight = inflight + redis.call('HSET', KEYS[3], taskId, pending)
  return { 0, id, now, inflight }
end

local out = {}
local a = 2
while a <= #ARGV do
  local n = tonumber(ARGV[a + 5])
  out[#out + 1] = deliver(ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], a + 6, a + 5 + n)
  a = a + 6 + n
end
return out
