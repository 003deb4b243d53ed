--[[
  The agent's side of a worker's ack. Refuses an instance that no longer holds the agent's epoch
  (fencing: Redis' own XACK checks no owner, so the check lives here). A receipt marks the
  pending entry received and clears a consumption suspicion; a completion or failure releases
  the agent's slot (the pending entry) and deletes the finished inbox entry. Running it twice
  for the same ack is harmless.

  KEYS[1] agent record hash   KEYS[2] agent pending hash   KEYS[3] agent inbox stream
  ARGV[1] stage (received|completed|failed)   ARGV[2] task_id   ARGV[3] epoch
  ARGV[4] attempt (0 = whichever was delivered)   ARGV[5] ack time ms

  Pending entry: attempt|entry id|sent_at|deadline_ms|received_at|epoch

  Output: { 0, sent_at_ms or 0 }
  Errors: -1 no such agent, -2 stale epoch
]]
local rec = redis.call('HMGET', KEYS[1], 'epoch', 'zombie', 'status')
if not rec[1] then return { -1 } end
if tonumber(rec[1]) ~= tonumber(ARGV[3]) then return { -2 } end
if ARGV[1] == 'received' and rec[2] then
  -- The task loop is consuming again: the agent is no zombie.
  redis.call('HDEL', KEYS[1], 'zombie')
  if rec[3] == 'SUSPECT' then redis.call('HSET', KEYS[1], 'status', 'HEALTHY') end
end
local p = redis.call('HGET', KEYS[2], ARGV[2])
if not p then return { 0, 0 } end
local attempt, msgId, sentAt, deadline, receivedAt, epoch = string.match(p, '^(%d+)|([^|]*)|(%d+)|(%d+)|(%d+)|(%d+)')
if not attempt then return { 0, 0 } end
if ARGV[4] ~= '0' and ARGV[4] ~= attempt then return { 0, 0 } end
if ARGV[1] == 'received' then
  if receivedAt == '0' then
    redis.call('HSET', KEYS[2], ARGV[2], table.concat({ attempt, msgId, sentAt, deadline, ARGV[5], epoch }, '|'))
  end
else
  redis.call('HDEL', KEYS[2], ARGV[2])
  if msgId ~= '' then redis.call('XDEL', KEYS[3], msgId) end
end
return { 0, tonumber(sentAt) }
