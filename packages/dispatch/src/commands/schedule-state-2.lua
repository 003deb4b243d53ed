--[[
  Pauses or resumes a schedule: a paused one leaves the index of next ticks, a resumed one
  comes back at the next tick the caller worked out.

  KEYS[1] schedule: the schedule's hash   KEYS[2] nextTicks: the index of next ticks (sorted set)
  ARGV[1] id: the schedule id (scoped)   ARGV[2] paused: 1 pause, 0 resume
  ARGV[3] next: the next tick ms (resume)

  Output: 1 done, 0 no such schedule
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'paused', '1', 'next_run_at', '0')
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], 'paused', '0', 'next_run_at', ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
return 1
