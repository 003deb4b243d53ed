/**
 * The BullMQ side of the http mode: fastify, `queue.add`, then `job.waitUntilFinished(queueEvents)`,
 * answering with the processor's return value.
 * Environment: REDIS_URL, GATEWAY_PORT.
 */
import Fastify from 'fastify';
import { Queue, QueueEvents } from 'bullmq';
import { announceReady, envInt, exitWithParent } from '../../load/child.ts';
import { GATEWAY_PATH } from '../../load/gateway-target.ts';
import { connection, parseReturn, QUEUE, GATEWAY_QUEUE_OPTIONS } from './shared.ts';

const queue = new Queue(QUEUE, { ...GATEWAY_QUEUE_OPTIONS, connection: connection() });
const events = new QueueEvents(QUEUE, { connection: connection() });
// Each request waiting in waitUntilFinished listens for the queue closing: 50 at once is expected.
queue.setMaxListeners(0);
const app = Fastify({ logger: false });

app.post<{ Body: { k: string } }>(GATEWAY_PATH, async (request) => {
  const job = await queue.add('t', { k: request.body.k });
  const value = parseReturn(await job.waitUntilFinished(events, 30_000));
  return { r: value?.r ?? null };
});

exitWithParent(async () => {
  await app.close();
  await Promise.allSettled([events.close(), queue.close()]);
});
await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
await app.listen({ host: '127.0.0.1', port: envInt('GATEWAY_PORT', 0) });
announceReady();
