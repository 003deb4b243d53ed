/**
 * The floor's side of the http mode: fastify XADDs the task and answers once its completion
 * arrives on the gateway's own completion stream.
 * Environment: REDIS_URL, GATEWAY_PORT.
 */
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { announceReady, env, envInt, exitWithParent } from '../../load/child.ts';
import { GATEWAY_PATH } from '../../load/gateway-target.ts';
import { FLOOR, followCompletions } from './shared.ts';

const url = env('REDIS_URL');
const redis = new Redis(url, { enableAutoPipelining: true });
const done = FLOOR.done(`gateway-${process.pid}`);
const waiting = new Map<string, (r: number) => void>();
const follower = followCompletions(url, done, (key, r) => {
  waiting.get(key)?.(r);
  waiting.delete(key);
});
const app = Fastify({ logger: false });

app.post<{ Body: { k: string } }>(GATEWAY_PATH, async (request) => {
  const key = request.body.k;
  const result = new Promise<number>((resolve) => waiting.set(key, resolve));
  await redis.xadd(FLOOR.tasks, '*', 'k', key, 'rs', done);
  return { r: await result };
});

exitWithParent(async () => {
  await app.close();
  await follower.close();
  await redis.quit();
});
await redis.ping();
await app.listen({ host: '127.0.0.1', port: envInt('GATEWAY_PORT', 0) });
announceReady();
