--[[
  The agent's side of a worker's ack. Refuses an instance that no longer holds the agent's epoch
  (fencing: Redis' own XACK checks no owner, so the check lives here). A completion or failure
  releases the agent's slot — the pending entry — and deletes the finished inbox entry. Running
  it twice for the same ack is harmless.

  KEYS[1] agent record hash   KEYS[2] agent pending hash   KEYS[3] agent inbox stream
  ARGV[1] stage (received|completed|failed)   ARGV[2] task_id   ARGV[3] epoch
  ARGV[4] attempt (0 = whichever was delivered)

  Output: { 0, sent_at_ms or 0 }
  Errors: -1 no such agent, -2 stale epoch
]]
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then return { -1 } end
if tonumber(epoch) ~= tonumber(ARGV[3]) then return { -2 } end
local p = redis.call('HGET', KEYS[2], ARGV[2])
if not p then return { 0, 0 } end
local attempt, msgId, sentAt = string.match(p, '^(%d+)|([^|]*)|(%d+)')
if ARGV[4] ~= '0' and ARGV[4] ~= attempt then return { 0, 0 } end
if ARGV[1] ~= 'received' then
  redis.call('HDEL', KEYS[2], ARGV[2])
  if msgId ~= '' then redis.call('XDEL', KEYS[3], msgId) end
end
return { 0, tonumber(sentAt) }
