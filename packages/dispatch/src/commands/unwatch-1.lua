--[[
  Drops a task's entry in the due set only while it is still the entry the caller set (same
  score). A `sent` record that lands late — after the attempt already failed and its retry put the
  task back in the due set with a new due time — must not remove the retry's entry: nothing else
  would ever dispatch it.

  KEYS[1] due set
  ARGV[1] task_id   ARGV[2] the entry's score when the caller set or read it (epoch ms)

  Output: 1 removed, 0 left in place
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
