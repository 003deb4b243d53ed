--[[
  Moves a schedule on to its next tick once the leader fired the due one, only if the schedule
  still waits for the tick the leader read: a schedule paused, resumed or deleted meanwhile, or
  advanced by another leader, is left as it is.

  KEYS[1] schedule: the schedule's hash   KEYS[2] nextTicks: the index of next ticks (sorted set)
  ARGV[1] id: the schedule id (scoped)   ARGV[2] read: the tick read (ms)
  ARGV[3] next: the next tick (ms)   ARGV[4] fired: the tick fired (ms)
  ARGV[5] taskId: the task it fired ('' for a tick skipped)

  Output: 1 advanced, 0 left as it was
]]
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], 'next_run_at', ARGV[3])
-- A skipped tick (no agent of the capability) fired no task: the last one stays.
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'last_run_at', ARGV[4], 'last_task_id', ARGV[5])
end
return 1
