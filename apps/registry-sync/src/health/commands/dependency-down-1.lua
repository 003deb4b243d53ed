--[[
  Marks an agent SUSPECT for a dependency flagged down fleet-wide (dependency-watch.ts): it gets
  no task (routers exclude an agent with `dependency_down`) and heartbeats keep it SUSPECT
  (`unwell`) until a probe passes whose answer no longer reports the dependency down
  (outcomes-1.lua). An agent already marked for a dependency, or not live, is left as it is.

  KEYS[1] agent: the agent record hash
  ARGV[1] dependency: the dependency's name

  Output: { 1 when it was marked now, its status before }
]]
local cur = redis.call('HMGET', KEYS[1], 'status', 'dependency_down')
local status = cur[1]
if not status or cur[2] then return { 0, status or '' } end
if status ~= 'HEALTHY' and status ~= 'DEGRADED' and status ~= 'SUSPECT' then return { 0, status } end
redis.call('HSET', KEYS[1], 'dependency_down', ARGV[1], 'unwell', 1, 'status', 'SUSPECT')
return { 1, status }
