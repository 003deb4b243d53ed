--[[
  Starts draining an agent: no new tasks; the record is removed by the sweeper once nothing
  delivered to it is unfinished. The agent itself may, with its token, or an operator (its key
  checked by the route: `POST /v1/agents/:agent_id/drain`), with empty token fields.

  KEYS[1] agent: the agent record hash   KEYS[2] pending: the agent's pending hash
  ARGV[1] tokenHash: the token secret's hash, or "" for an operator
  ARGV[2] tokenEpoch: the token's epoch, or ""

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
return { tonumber(cur[1]), redis.call('HLEN', KEYS[2]), cur[3] or '', cur[4] or '' }
