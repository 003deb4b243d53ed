--[[
  Re-verifies the chosen agent and delivers a task to its inbox in the same step: the agent must
  still hold the epoch the router saw, be HEALTHY or SUSPECT, not be ejected, have a lease
  younger than the offline bound on Redis server time, and have a free slot. The same task
  attempt delivered twice (a re-sent command) returns the first delivery.

  KEYS[1] agent record hash   KEYS[2] agent inbox stream   KEYS[3] agent pending hash
  ARGV[1] epoch   ARGV[2] task_id   ARGV[3] attempt   ARGV[4] offline bound ms
  ARGV[5] deadline_ms (0 = none)   ARGV[6] 1 when the task is a probe (agents in observation
  mode take probes only)   ARGV[7..] task entry fields and values

  Pending entry: attempt|entry id|sent_at|deadline_ms|received_at (0 until receipt)|epoch

  Output: { 0 delivered | 1 already delivered, message_id, sent_at_ms, inflight after }
  Errors: -1 agent gone, -2 epoch changed, -3 not live (status, lease or ejected), -4 no free slot
]]
local rec = redis.call('HMGET', KEYS[1], 'epoch', 'status', 'max_concurrency', 'lease_at', 'ejected_until', 'observe')
if not rec[1] then return { -1 } end
if tonumber(rec[1]) ~= tonumber(ARGV[1]) then return { -2 } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if (rec[2] ~= 'HEALTHY' and rec[2] ~= 'SUSPECT') or now - tonumber(rec[4]) >= tonumber(ARGV[4])
  or (tonumber(rec[5]) or 0) > now or (rec[6] == '1' and ARGV[6] ~= '1') then
  return { -3 }
end
local existing = redis.call('HGET', KEYS[3], ARGV[2])
if existing then
  local attempt, msgId, sentAt = string.match(existing, '^(%d+)|([^|]*)|(%d+)')
  if attempt == ARGV[3] then return { 1, msgId, tonumber(sentAt), redis.call('HLEN', KEYS[3]) } end
end
local inflight = redis.call('HLEN', KEYS[3])
if inflight >= tonumber(rec[3]) then return { -4, inflight } end
local entry = { 'XADD', KEYS[2], '*' }
for i = 7, #ARGV do entry[#entry + 1] = ARGV[i] end
local id = redis.call(unpack(entry))
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3] .. '|' .. id .. '|' .. now .. '|' .. ARGV[5] .. '|0|' .. ARGV[1])
return { 0, id, now, inflight + 1 }
