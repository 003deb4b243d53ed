--[[
  A test script: increments a counter, for the tests that run scripts on a Redis Cluster.

  KEYS[1] counter: the counter's key

  Output: the counter's new value
]]
return redis.call('INCR', KEYS[1])
