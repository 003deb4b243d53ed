--[[
  The slots an agent's deliveries take (`slots_taken`, docs/ARCHITECTURE.md, Slots): the smaller
  of its pending hash's length and the inbox entries its worker has not XACKed. What deliver-3.lua
  counts against max_concurrency, read on its own for a recount or a listing.

  KEYS[1] pending: the agent's pending hash   KEYS[2] inbox: its inbox stream

  Output: the slots taken
]]
--#include slots-taken
return slots_taken(redis.call('HLEN', KEYS[1]), KEYS[2])
