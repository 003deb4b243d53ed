--[[
  Writes or removes one endpoint declaration and its secrets, only while the stored declaration
  is still the one the caller read (compare and set): the caller checked that text's tenant and
  source, and kept its created_at. Two writers of one agent_id (an API call, the endpoints file
  of another registry-sync) cannot both win on what they read.

  KEYS[1] records: the declarations hash   KEYS[2] secrets: the secrets hash
  ARGV[1] agentId: the endpoint agent's id
  ARGV[2] expected: the declaration's JSON as read, "" when there was none
  ARGV[3] record: the new declaration's JSON, "" to remove it with its secrets
  ARGV[4] secrets: the new secrets' JSON, "" for none

  Output: 1 written, 0 the declaration changed since it was read (nothing written)
]]
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (cur or '') ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
end
return 1
