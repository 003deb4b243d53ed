--[[
  Starts draining an agent: no new tasks; the record is removed by the sweeper once nothing
  delivered to it is unfinished. The agent itself may, with its token, or an operator (its key
  checked by the route: `POST /v1/agents/:agent_id/drain`), with empty token fields.

  An operator's drain also keeps the record until `drain_hold_until` (holdMs from now), so the
  agent, idle or not, is told DRAINING in a heartbeat answer before it is removed.

  KEYS[1] agent: the agent record hash   KEYS[2] pending: the agent's pending hash
  ARGV[1] tokenHash: the token secret's hash, or "" for an operator
  ARGV[2] tokenEpoch: the token's epoch, or ""
  ARGV[3] holdMs: how long an operator's drain keeps the record at least

  Output: { epoch, pending count, instance_id, status before }
  Errors: -5 no such agent, -2 stale epoch, -3 wrong token
]]
local cur = redis.call('HMGET', KEYS[1], 'epoch', 'token_hash', 'instance_id', 'status')
if not cur[1] then return { -5 } end
if ARGV[1] ~= '' and cur[2] ~= ARGV[1] then
  if tonumber(ARGV[2]) and tonumber(ARGV[2]) < tonumber(cur[1]) then return { -2, tonumber(cur[1]) } end
  return { -3 }
end
redis.call('HSET', KEYS[1], 'status', 'DRAINING')
if ARGV[1] == '' and cur[4] ~= 'DRAINING' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', KEYS[1], 'drain_hold_until', now + tonumber(ARGV[3]))
end
return { tonumber(cur[1]), redis.call('HLEN', KEYS[2]), cur[3] or '', cur[4] or '' }
