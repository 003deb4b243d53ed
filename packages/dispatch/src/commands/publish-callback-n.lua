--[[
  Publishes final results on one callback topic, each once: a result's mark and its entry are
  written together, so a re-processed ack finds the mark and publishes nothing. One call carries
  every result of a tick for the topic (the marks share the topic's hash tag). A completion's
  mark is a field of the topic's marks hash for the minute it completed in (one key per topic
  and minute, not one per task), read for the whole call in one HMGET and written in one HSET; a
  dead-letter notice, once per dead attempt, keeps a key of its own.

  KEYS[1] topic: the callback topic stream
  KEYS[2] marks: the completions' marks hash (keys.ts callbackMarks)
  KEYS[3..] notices: the dead-letter notices' mark keys
  ARGV[1] markTtlS: mark retention seconds   ARGV[2] maxLen: topic max length (approximate)
  ARGV[3] topicTtlS: topic retention seconds
  ARGV[4..] results, per result: its mark — a task_id (a completion: the field in KEYS[2]) or
  "#<i>" (a notice: its mark is KEYS[i]) —, then its entry: how many entry fields and values
  follow, then those

  Output: per result, its entry id, or 0 when it was already published
]]
local marks = {}
local a = 4
while a <= #ARGV do
  if string.sub(ARGV[a], 1, 1) ~= '#' then marks[#marks + 1] = ARGV[a] end
  a = a + 2 + tonumber(ARGV[a + 1])
end
local seen = {}
if #marks > 0 then
  local found = redis.call('HMGET', KEYS[2], unpack(marks))
  for i = 1, #marks do
    if found[i] then seen[marks[i]] = true end
  end
end

local out = {}
local written = {}
a = 4
while a <= #ARGV do
  local mark, n = ARGV[a], tonumber(ARGV[a + 1])
  local fresh
  if string.sub(mark, 1, 1) == '#' then
    fresh = redis.call('SET', KEYS[tonumber(string.sub(mark, 2))], '1', 'NX', 'EX', ARGV[1]) ~= false
  else
    fresh = not seen[mark]
    if fresh then
      seen[mark] = true
      written[#written + 1] = mark
      written[#written + 1] = '1'
    end
  end
  if fresh then
    out[#out + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, a + 2, a + 1 + n))
  else
    out[#out + 1] = 0
  end
  a = a + 2 + n
end
if #written > 0 then
  redis.call('HSET', KEYS[2], unpack(written))
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
for i = 1, #out do
  if out[i] ~= 0 then
    redis.call('EXPIRE', KEYS[1], ARGV[3])
    break
  end
end
return out
