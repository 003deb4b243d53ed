--[[
  Renews the execution leases of an agent's running tasks (a `renew` ack): each named task the
  agent still holds under the ack's epoch, received, gets the ack's time as its last renewal. A
  task no longer on the agent (finished, taken back, cancelled and stopped) is skipped, so a late
  renewal cannot bring a lapsed lease back.

  KEYS[1] agent: the agent record hash   KEYS[2] pending: the agent's pending hash
  KEYS[3] leases: the agent's leases hash
  ARGV[1] epoch: the ack's epoch   ARGV[2] at: the ack's time ms
  ARGV[3..] taskIds, one per task: taskId

  Pending entry (deliver-3.lua): attempt|epoch|mark|entry id|received_at|deadline_ms

  Output: how many leases were renewed, or -5 no such agent, -2 stale epoch
]]
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then return -5 end
if epoch ~= ARGV[1] then return -2 end
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return 0 end
local found = redis.call('HMGET', KEYS[2], unpack(ids))
local writes = {}
for i = 1, #ids do
  local p = found[i]
  -- Delivered under this epoch and received (received_at is not 0).
  if p then
    local e, received = string.match(p, '^%d+|(%d+)|[^|]*|[^|]*|(%d+)|')
    if e == ARGV[1] and received and received ~= '0' then
      writes[#writes + 1] = ids[i]
      writes[#writes + 1] = ARGV[2]
    end
  end
end
if #writes > 0 then redis.call('HSET', KEYS[3], unpack(writes)) end
return #writes / 2
