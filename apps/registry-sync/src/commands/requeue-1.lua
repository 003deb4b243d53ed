--[[
  Puts a pool entry back for another pull agent: adds a copy of it to the pool, then
  acknowledges and deletes the old one. Only an entry still in the stream is copied, so doing it
  twice (two refused acks of one task, a sweep after a refusal) adds one copy; a worker that
  acknowledged the old entry itself (Redis' XACK checks no owner) cannot strand the task.

  KEYS[1] pool: the pool stream
  ARGV[1] group: the consumer group   ARGV[2] entryId: the entry's id

  Output: the new entry's id, or "" when the entry is gone (already put back or deleted)
]]
local found = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if #found == 0 then return '' end
local id = redis.call('XADD', KEYS[1], '*', unpack(found[1][2]))
redis.call('XDEL', KEYS[1], ARGV[2])
return id
