--[[
  Finishes outbox entries of one task shard once their tasks' records are in InfluxDB (or need
  none): a task still final gets its expiry (what the script that made it final leaves to the
  archive), its payload emptied once completed or cancelled, and its tombstone in the hash of
  its end day; the entry is deleted. A task no longer final (replayed meanwhile) is left as it
  is: its next end appends another entry. The timeline list gets an expiry only where there is
  one (the task's `tl` field).

  KEYS[1] outbox: the task shard's archive outbox stream
  KEYS[2..] entries: per entry the task hash, its timeline list, the tombstones hash of its end day
  ARGV[1] taskRetentionS: how long a completed task is kept after its end
  ARGV[2] dlqRetentionS: how long a dead or cancelled task is kept after its end
  ARGV[3..] entries, per entry: entryId, taskId, endMs (0: no tombstone: nothing was archived),
  tombTtlS (seconds the tombstones hash is kept from now)

  Output: how many tasks got their expiry (the entries are deleted in one XDEL)
]]
--#include is-final
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local done = 0
local ids = {}
local dated = {}
local k = 2
for a = 3, #ARGV, 4 do
  local task, tl, tomb = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  k = k + 3
  local cur = redis.call('HMGET', task, 'status', 'completed_at', 'dead_at', 'cancelled_at', 'tl')
  if cur[1] and is_final(cur[1]) then
    local ended = tonumber(cur[2]) or 0
    local keep = ARGV[1]
    if cur[1] == 'dead' then ended, keep = tonumber(cur[3]) or 0, ARGV[2] end
    if cur[1] == 'cancelled' then ended, keep = tonumber(cur[4]) or 0, ARGV[2] end
    if ended <= 0 then ended = now end
    local ttl = math.max(1, math.ceil((ended + tonumber(keep) * 1000 - now) / 1000))
    if cur[1] ~= 'dead' then redis.call('HSET', task, 'payload', '') end
    redis.call('EXPIRE', task, ttl)
    if cur[5] then redis.call('EXPIRE', tl, ttl) end
    done = done + 1
    if ARGV[a + 2] ~= '0' then
      redis.call('HSET', tomb, ARGV[a + 1], ARGV[a + 2])
      -- One EXPIRE per day's hash and call: its entries all give it the same time.
      if not dated[tomb] then
        redis.call('EXPIRE', tomb, ARGV[a + 3])
        dated[tomb] = true
      end
    end
  end
  ids[#ids + 1] = ARGV[a]
end
if #ids > 0 then redis.call('XDEL', KEYS[1], unpack(ids)) end
return done
