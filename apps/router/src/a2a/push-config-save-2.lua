--[[
  Saves a push config (when ARGV[1] is not empty) and points the task's final result at the push
  topic when the task exists, is not final, and has no callback topic of its caller's (none, or
  a router's wait topic); the configs expire with the task (until it has an expiry, in ARGV[4]).

  KEYS[1] configs: the task's push configs hash (keys.ts a2aPush)   KEYS[2] task: the task hash
  ARGV[1] configId: the config's id, or '' to only point the task at the push topic
  ARGV[2] config: the config JSON   ARGV[3] pushTopic: the push topic
  ARGV[4] pendingTtlMs: how long configs are kept while the task has no expiry
  ARGV[5] waitPrefix: the wait-topic prefix   ARGV[6] maxConfigs: most configs of one task

  Output: 1 saved (or nothing to save), 0 too many configs
]]
--#include is-final
if ARGV[1] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[6]) then
    return 0
  end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
local t = redis.call('HMGET', KEYS[2], 'status', 'callback_topic')
local status, topic = t[1], t[2]
if status and not is_final(status) then
  if (not topic) or topic == '' or string.sub(topic, 1, #ARGV[5]) == ARGV[5] then
    redis.call('HSET', KEYS[2], 'callback_topic', ARGV[3])
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
end
return 1
