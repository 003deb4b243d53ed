--[[
  Records a submission that is dead on arrival (a loop: too many hops, or only agents already
  on its trace serve it), so the caller can see why through the API and the dead-letter queue.

  While archiving is on ("1" in archive) the task_id goes to the shard's archive outbox and the
  expiry is left to the archiver, which sets it once the task's record is in InfluxDB.

  KEYS[1] task: the task hash   KEYS[2] timeline: its timeline list
  KEYS[3] outbox: the task shard's archive outbox stream (keys.ts archiveOutbox)
  ARGV[1] taskId   ARGV[2] capability   ARGV[3] payload   ARGV[4] callbackTopic
  ARGV[5] traceId   ARGV[6] reason   ARGV[7] retentionS: retention seconds
  ARGV[8] archive: "1" to archive the task, "" not to
  ARGV[9..] constraints: the task's constraints that are set, each a field and its value, as
  claim-n.lua takes them (a replay sends by them)

  Output: 1 recorded, 0 the task_id already exists
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'task_id', ARGV[1], 'capability', ARGV[2], 'payload', ARGV[3],
  'callback_topic', ARGV[4], 'trace_id', ARGV[5], 'status', 'dead', 'dead_reason', ARGV[6],
  'dead_at', now, 'attempt', 0, 'agent_id', '', 'epoch', 0, 'created_at', now, 'deadline_ms', 0,
  'tl', 1, unpack(ARGV, 9))
-- The accepted stage is created_at; the death is exceptional, so it goes in the list.
redis.call('RPUSH', KEYS[2], '{"stage":"dead","at":' .. now .. ',"attempt":0,"reason":' .. cjson.encode(ARGV[6]) .. '}')
if ARGV[8] == '1' then
  redis.call('XADD', KEYS[3], '*', 't', ARGV[1])
  return 1
end
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('EXPIRE', KEYS[2], ARGV[7])
return 1
