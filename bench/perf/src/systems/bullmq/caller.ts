/**
 * A BullMQ caller process. flood and paced: the jobs of one tick go together in `queue.addBulk`
 * (as Agent-Reach's caller sends them in one batch request), results from QueueEvents
 * `completed`. http: POSTs to the BullMQ gateway (fastify + waitUntilFinished).
 * Environment: REDIS_URL, GATEWAY_URL, HTTP_CONNECTIONS.
 */
import { Queue, QueueEvents } from 'bullmq';
import { env, envInt } from '../../load/child.ts';
import { serveCaller } from '../../load/caller.ts';
import { gatewayTarget } from '../../load/gateway-target.ts';
import { autoBatch } from '../../load/auto-batch.ts';
import { connection, parseReturn, QUEUE } from './shared.ts';

serveCaller(async (sink) => {
  const queue = new Queue(QUEUE, { connection: connection() });
  const events = new QueueEvents(QUEUE, { connection: connection() });
  events.on('completed', ({ returnvalue }) => {
    const v = parseReturn(returnvalue);
    if (v) sink.complete(v.k, v.r);
  });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  const gateway = gatewayTarget(env('GATEWAY_URL'), envInt('HTTP_CONNECTIONS', 50), sink);
  return {
    queued: {
      submit: autoBatch(async (keys) => {
        await queue.addBulk(keys.map((k) => ({ name: 't', data: { k } })));
        return keys.map(() => undefined);
      }, 256),
    },
    http: gateway.target,
    async close() {
      await Promise.allSettled([gateway.close(), events.close(), queue.close()]);
    },
  };
});
