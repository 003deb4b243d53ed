--[[
  Publishes final results on one callback topic, each once: a result's mark and its entry are
  written together, so a re-processed ack finds the mark and publishes nothing. One call carries
  every result of a tick for the topic (the marks share the topic's hash tag).

  KEYS[1] callback topic stream   KEYS[1 + i] the i-th result's published mark
  ARGV[1] mark retention seconds   ARGV[2] topic max length (approximate)
  ARGV[3] topic retention seconds
  ARGV[4..] per result, in KEYS' order: how many entry fields and values follow, then those

  Output: per result, its entry id, or 0 when it was already published
]]
local out = {}
local published = false
local a = 4
for i = 2, #KEYS do
  local n = tonumber(ARGV[a])
  if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[1]) == false then
    out[#out + 1] = 0
  else
    local entry = { 'XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*' }
    for j = a + 1, a + n do entry[#entry + 1] = ARGV[j] end
    out[#out + 1] = redis.call(unpack(entry))
    published = true
  end
  a = a + n + 1
end
if published then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return out
