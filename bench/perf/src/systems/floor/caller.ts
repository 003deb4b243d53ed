/**
 * The raw floor's caller process. flood and paced: XADD to the task stream (auto-pipelined),
 * results by XREAD on its own completion stream. http: POSTs to the floor gateway.
 * Environment: REDIS_URL, GATEWAY_URL, HTTP_CONNECTIONS.
 */
import { Redis } from 'ioredis';
import { env, envInt } from '../../load/child.ts';
import { serveCaller } from '../../load/caller.ts';
import { gatewayTarget } from '../../load/gateway-target.ts';
import { FLOOR, followCompletions } from './shared.ts';

serveCaller(async (sink) => {
  const url = env('REDIS_URL');
  const redis = new Redis(url, { enableAutoPipelining: true });
  const done = FLOOR.done(`caller-${process.pid}`);
  const follower = followCompletions(url, done, (key, r) => sink.complete(key, r));
  await redis.ping();
  const gateway = gatewayTarget(env('GATEWAY_URL'), envInt('HTTP_CONNECTIONS', 50), sink);
  return {
    queued: {
      async submit(key) {
        await redis.xadd(FLOOR.tasks, '*', 'k', key, 'rs', done);
      },
    },
    http: gateway.target,
    async close() {
      await Promise.allSettled([gateway.close(), follower.close()]);
      await redis.quit();
    },
  };
});
