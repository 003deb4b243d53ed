--[[
  Publishes a task's final result on its callback topic once: the mark and the entry are written
  together, so a re-processed ack finds the mark and publishes nothing.

  KEYS[1] callback topic stream   KEYS[2] published mark for this task
  ARGV[1] mark retention seconds   ARGV[2] topic max length (approximate)
  ARGV[3] topic retention seconds  ARGV[4..] entry fields and values

  Output: the entry id, or false when it was already published
]]
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) == false then return false end
local entry = { 'XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*' }
for i = 4, #ARGV do entry[#entry + 1] = ARGV[i] end
local id = redis.call(unpack(entry))
redis.call('EXPIRE', KEYS[1], ARGV[3])
return id
