--[[
  Takes a task attempt back from an agent after it was re-routed or dead-lettered: frees the
  slot, acknowledges the inbox entry in the consumer group (so no consumer's pending list keeps
  it) and deletes it. An attempt a pull agent took from a pool is only freed here; the caller
  acknowledges the pool entry (another slot). Only the given attempt is released.

  KEYS[1] agent: the agent record hash (unused, keeps the slot explicit)
  KEYS[2] pending: the agent's pending hash   KEYS[3] inbox: the agent's inbox stream
  ARGV[1] taskId   ARGV[2] attempt   ARGV[3] group: the consumer group

  Pending entry: attempt|epoch|mark|entry id|received_at|deadline_ms (deliver-3.lua)

  Output: { 1 released | 0 nothing to release, pool capability or "", pool entry id or "" }
]]
local p = redis.call('HGET', KEYS[2], ARGV[1])
if not p then return { 0, '', '' } end
local attempt, mark, msgId = string.match(p, '^(%d+)|%d+|([^|]*)|([^|]*)|')
if attempt ~= ARGV[2] then return { 0, '', '' } end
redis.call('HDEL', KEYS[2], ARGV[1])
if string.sub(mark, 1, 5) == 'pool=' then return { 1, string.sub(mark, 6), msgId } end
if msgId and msgId ~= '' then
  redis.pcall('XACK', KEYS[3], ARGV[3], msgId)
  redis.call('XDEL', KEYS[3], msgId)
end
return { 1, '', '' }
