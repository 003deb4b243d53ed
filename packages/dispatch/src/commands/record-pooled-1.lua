--[[
  Records the sent stage of a task put in its capability's pool, once the XADD returned an id (a
  task delivered to an agent needs no such step: its pending entry in the agent's slot is the
  record, and the task step of its first ack copies it). A pull agent may already have reported
  receipt (it can be faster than this call); the status then stays where it is.

  KEYS[1] task: the task hash
  ARGV[1] attempt   ARGV[2] messageId: the pool entry's id   ARGV[3] sentAt: ms
  ARGV[4] stream: the pool stream

  Output: the task's status after the call, or false when the attempt is no longer current
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'message_id')
if not cur[1] or cur[2] ~= ARGV[1] then return false end
if cur[3] == ARGV[2] then return cur[1] end
local status = cur[1]
if status == 'accepted' then
  status = 'sent'
  redis.call('HSET', KEYS[1], 'message_id', ARGV[2], 'sent_at', ARGV[3], 'stream', ARGV[4], 'status', status)
else
  redis.call('HSET', KEYS[1], 'message_id', ARGV[2], 'sent_at', ARGV[3], 'stream', ARGV[4])
end
return status
