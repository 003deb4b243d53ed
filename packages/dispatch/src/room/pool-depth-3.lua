--[[
  How deep a pool is (pool-gauge.ts): over its three priority bands, the entries its group has
  handed out and not yet had acknowledged (tasks being worked, or released for re-placement) plus
  the entries not yet handed out (tasks waiting): the group's lag, or, when Redis cannot tell it
  (an entry not yet handed out was deleted), the entries after the last one handed out, counted
  up to ARGV[2] per band. An entry acknowledged and left in the stream (a malformed entry a worker
  parked) is not counted, which a plain XLEN would do for ever.

  KEYS[1] high: the pool's highest band (pool-bands.ts)   KEYS[2] mid: the next
  KEYS[3] low: the pool stream itself (priority 0)
  ARGV[1] group: the group pull agents read with   ARGV[2] most: count waiting entries up to this

  Output: the depth
]]
local depth = 0
local most = tonumber(ARGV[2])
for i = 1, 3 do
  local band = KEYS[i]
  if redis.call('EXISTS', band) == 1 then
    local last, lag = nil, nil
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', band)) do
      local f = {}
      for j = 1, #g, 2 do f[g[j]] = g[j + 1] end
      if f['name'] == ARGV[1] then
        depth = depth + tonumber(f['pending'])
        last = f['last-delivered-id']
        if type(f['lag']) == 'number' then lag = f['lag'] end
      end
    end
    if lag then
      depth = depth + lag
    else
      local from = last and ('(' .. last) or '-'
      depth = depth + #redis.call('XRANGE', band, from, '+', 'COUNT', most)
    end
  end
end
return depth
