--[[
  Records the sent stage once the XADD returned an id. The worker may already have reported
  receipt (it can be faster than this call); the status then stays where it is.

  KEYS[1] task hash   KEYS[2] task timeline list
  ARGV[1] attempt   ARGV[2] message_id   ARGV[3] sent_at_ms   ARGV[4] stream
  ARGV[5] timeline entry (JSON)

  Output: the task's status after the call, or false when the attempt is no longer current
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'message_id')
if not cur[1] or tonumber(cur[2]) ~= tonumber(ARGV[1]) then return false end
if cur[3] == ARGV[2] then return cur[1] end
local status = cur[1]
if status == 'accepted' then
  status = 'sent'
  redis.call('HSET', KEYS[1], 'message_id', ARGV[2], 'sent_at', ARGV[3], 'stream', ARGV[4], 'status', status)
else
  redis.call('HSET', KEYS[1], 'message_id', ARGV[2], 'sent_at', ARGV[3], 'stream', ARGV[4])
end
redis.call('RPUSH', KEYS[2], ARGV[5])
return status
