/**
 * A BullMQ caller process. flood and paced: the jobs of one tick go together in `queue.addBulk`
 * (as Agent-Reach's caller sends them in one batch request), results from QueueEvents
 * `completed`. http: POSTs to the BullMQ gateway (fastify + waitUntilFinished), each task timed
 * by the gateway's reply; the caller's QueueEvents is closed meanwhile, so it neither reads the
 * events stream nor reports results first.
 * Environment: REDIS_URL, GATEWAY_URL, HTTP_CONNECTIONS.
 */
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { env, envInt } from '../../load/child.ts';
import { serveCaller } from '../../load/caller.ts';
import { gatewayTarget } from '../../load/gateway-target.ts';
import { autoBatch } from '../../load/auto-batch.ts';
import { connection, parseReturn, QUEUE, CALLER_QUEUE_OPTIONS } from './shared.ts';

serveCaller(async (sink) => {
  const queue = new Queue(QUEUE, { ...CALLER_QUEUE_OPTIONS, connection: connection() });
  const redis = new Redis(env('REDIS_URL'));
  await queue.waitUntilReady();
  let events: QueueEvents | undefined;
  /** Follows the events stream from its newest entry on, so nothing after this call is missed. */
  const follow = async () => {
    if (events) return;
    const [newest] = await redis.xrevrange(queue.toKey('events'), '+', '-', 'COUNT', 1);
    events = new QueueEvents(QUEUE, {
      connection: connection(),
      lastEventId: newest?.[0] ?? '0-0',
    });
    events.on('completed', ({ returnvalue }) => {
      const v = parseReturn(returnvalue);
      if (v) sink.complete(v.k, v.r);
    });
    await events.waitUntilReady();
  };
  const unfollow = async () => {
    const e = events;
    events = undefined;
    await e?.close();
  };
  await follow();
  const gateway = gatewayTarget(env('GATEWAY_URL'), envInt('HTTP_CONNECTIONS', 50), sink);
  return {
    queued: {
      submit: autoBatch(async (keys) => {
        await queue.addBulk(keys.map((k) => ({ name: 't', data: { k } })));
        return keys.map(() => undefined);
      }, 256),
    },
    http: gateway.target,
    prepare: (mode) => (mode === 'http' ? unfollow() : follow()),
    async close() {
      await Promise.allSettled([gateway.close(), unfollow(), queue.close(), redis.quit()]);
    },
  };
});
