/**
 * Webhook throughput: final results of tasks with `callback_url`, published on the webhook topic
 * exactly as registry-sync publishes them (CallbackPublisher), made deliveries, signed and POSTed
 * by in-process routers to a local receiver on 127.0.0.1 that answers 200. Prints deliveries per
 * second from the first publish to the last delivery. Starts and stops its own Redis.
 *
 *   npm run bench:webhooks -w @agent-reach/bench -- [--tasks=5000] [--routers=1]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallbackPublisher } from '@agent-reach/dispatch';
import { reachKeys, WebhookTargetField } from '@agent-reach/protocol';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { startOwnRedis } from '@agent-reach/testkit';

const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const TASKS = arg('tasks', 5000);
const ROUTERS = arg('routers', 1);
/** The internal topic webhook tasks' results go to (apps/router/src/webhooks/webhook-topic.ts). */
const WEBHOOK_TOPIC = '_wait.webhooks';

async function main(): Promise<void> {
  const redisServer = await startOwnRedis();
  const prefix = `whbench${process.pid}`;
  const keys = reachKeys(prefix);
  let received = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const ids = new Set<string>();
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.add(String(req.headers['webhook-id']));
      received += 1;
      res.writeHead(200).end();
      if (ids.size >= TASKS) done();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const routers: RouterService[] = [];
  for (let i = 0; i < ROUTERS; i++)
    routers.push(
      await createRouterService({
        redisUrl: redisServer.url,
        prefix,
        port: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
      }),
    );
  const first = routers[0] as RouterService;
  const secret = await first.app.inject({
    method: 'POST',
    url: '/v1/tenants/default/webhook-secret',
    payload: {},
  });
  if (secret.statusCode !== 200) throw new Error(`secret: ${secret.statusCode} ${secret.body}`);
  // The router's own connection: publish-callback-n.lua is loaded there.
  const redis = first.redis;
  // What a submission with callback_url writes for each task.
  for (let i = 0; i < TASKS; i += 500) {
    const pipe = redis.pipeline();
    for (let j = i; j < Math.min(TASKS, i + 500); j++)
      pipe.hset(keys.webhookTarget(`t${j}`), {
        [WebhookTargetField.url]: url,
        [WebhookTargetField.topic]: '',
      });
    await pipe.exec();
  }
  const publisher = new CallbackPublisher({
    redis,
    keys,
    settings: { callbackRetentionS: 3600, callbackMaxLen: 1_000_000 },
  });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: TASKS }, (_, j) =>
      publisher.publish(WEBHOOK_TOPIC, {
        task_id: `t${j}`,
        status: 'completed',
        capability: 'bench',
        agent_id: 'a1',
        attempt: 1,
        completed_at: Date.now(),
        result: '{"ok":true}',
        duration_ms: 1,
      }),
    ),
  );
  const published = performance.now() - t0;
  await all;
  const seconds = (performance.now() - t0) / 1000;
  process.stdout.write(
    `webhooks: ${TASKS} tasks, ${ROUTERS} router(s): ${Math.round(TASKS / seconds)} deliveries/s ` +
      `(${seconds.toFixed(2)} s in all, ${received} POSTs, ${(published / 1000).toFixed(2)} s to publish)\n`,
  );
  for (const r of routers) await r.close();
  receiver.close();
  await redisServer.stop();
}

await main();
