--[[
  Drops tasks' entries in the due set only while each is still the entry the caller set (same
  score). A `sent` record that lands late — after the attempt already failed and its retry put the
  task back in the due set with a new due time — must not remove the retry's entry: nothing else
  would ever dispatch it.

  KEYS[1] due set
  ARGV[1], ARGV[2], … pairs of task_id and the entry's score when the caller set or read it (epoch ms)

  Output: how many entries were removed
]]
local removed = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then removed = removed + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return removed
